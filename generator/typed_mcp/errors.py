"""Errors that end a run with a one-line reason and a distinct exit code."""

from __future__ import annotations


class TypedMcpError(Exception):
    """A failure the user can act on. `str()` is the whole one-line reason."""

    exit_code = 1


class SpecError(TypedMcpError):
    """The document is unusable: says which file, which JSON pointer, and what is wrong."""

    def __init__(self, message: str, *, source: str | None = None, pointer: str | None = None) -> None:
        self.message = message
        self.source = source
        self.pointer = pointer
        where = ": ".join(part for part in (source, pointer) if part)
        super().__init__(f"{where}: {message}" if where else message)


class ConfigError(TypedMcpError):
    """The curation config (`--config`) is unusable: names the file, the key and the problem."""

    def __init__(self, path: object, key: str, problem: str) -> None:
        self.path, self.key, self.problem = str(path), key, problem
        super().__init__(f"{path}: {key}: {problem}" if key else f"{path}: {problem}")


class FetchError(TypedMcpError):
    """A live spec could not be fetched (network, status, size, content type)."""

    exit_code = 3


class NoOperationsError(SpecError):
    """The document has no operations (for example a webhooks-only document)."""

    exit_code = 4


class StrictModeError(TypedMcpError):
    """`--strict` and at least one operation was skipped with a warning."""

    exit_code = 5


class OutputError(TypedMcpError):
    """The output folder cannot be written or replaced."""

    exit_code = 6


class ToolchainError(TypedMcpError):
    """A library's output no longer has the form typed-mcp edits (a toolchain outside the lock file)."""

    exit_code = 8
