"""A local cache for the two slow steps of a run, model generation and the tool catalog, and for
the record of each whole run (runs.py).

Regenerating a big API when nothing changed (the drift check, `make generate` after a pull) would
otherwise redo both: datamodel-code-generator takes seconds on a big spec, and registering a
thousand tools with the MCP SDK even longer. An entry is found only by a key made of everything
its result depends on: the step's exact input and the versions of the libraries that compute it, so a
hit gives the same bytes a fresh run would. The cache never changes the output, only its speed;
entries live outside the project (default `~/.cache/typed-mcp`, or `TYPED_MCP_CACHE_DIR`), and a
missing, unreadable or unwritable cache just means the work is done.

An entry is not trusted for being there: `put` records a digest of its name and content in a
folder of its own (`digests/`), and `get` gives an entry only while its content matches it; then
the caller checks it as it checks fresh output (models: the guard; a catalog: its layout and the
plan). Anything else is a warning on stderr and the work done again, never a failure.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from typed_mcp import __version__
from typed_mcp.resources import templates_dir

ENV_DIR = "TYPED_MCP_CACHE_DIR"
ENV_OFF = "TYPED_MCP_NO_CACHE"


_ENABLED = contextvars.ContextVar("typed_mcp_cache_enabled", default=True)


@contextlib.contextmanager
def enabled(on: bool) -> Iterator[None]:
    """Within the block, the cache is used only if `on` (and the environment does not turn it off)."""
    token = _ENABLED.set(on)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def directory() -> Path | None:
    if not _ENABLED.get() or os.environ.get(ENV_OFF):
        return None
    configured = os.environ.get(ENV_DIR)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "typed-mcp"


@functools.lru_cache(maxsize=1)
def _generator_digest() -> str:
    """The generator's own code and templates: an edit in a checkout changes every key, even
    without a version bump."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for root in (here, templates_dir()):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# The libraries whose versions are part of every key: what typed-mcp needs to run (and its semantic
# extra, which computes the search vectors), and what they need, found from the installed metadata,
# so that a dependency added to pyproject.toml is covered without a list to keep here.
_ROOTS = ("typed-mcp", "mcp", "pydantic", "datamodel-code-generator", "ruff")
_OUTPUT_EXTRAS = frozenset({"semantic"})


@functools.lru_cache(maxsize=1)
def _toolchain() -> tuple[str, ...]:
    """`name version` of each distribution typed-mcp runs with, sorted: the closure of its requirements
    (the extras that reach the output included, development ones not)."""
    seen: dict[str, str] = {}
    queue = [(name, frozenset(_OUTPUT_EXTRAS if name == "typed-mcp" else ())) for name in _ROOTS]
    while queue:
        name, extras = queue.pop()
        canonical = re.sub(r"[-_.]+", "-", name).lower()
        if canonical in seen:
            continue
        try:
            dist = metadata.distribution(canonical)
        except metadata.PackageNotFoundError:
            seen[canonical] = "-"
            continue
        seen[canonical] = dist.version
        for text in dist.requires or ():
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras or {""}):
                queue.append((requirement.name, frozenset(requirement.extras)))
    return tuple(f"{name} {version}" for name, version in sorted(seen.items()))


def key(kind: str, *parts: str | bytes) -> str:
    """A digest of the inputs, of the generator itself and of every library version that could
    change the result."""
    digest = hashlib.sha256()
    versions = [f"typed-mcp {__version__} {_generator_digest()}", f"python {sys.version_info[0]}.{sys.version_info[1]}"]
    for part in [kind, *versions, *_toolchain(), *parts]:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))  # length-prefixed: ("ab", "c") != ("a", "bc")
        digest.update(data)
    return f"{kind}-{digest.hexdigest()}"


DIGESTS = "digests"  # beside the entries: each entry's digest, under the entry's name


def _digest(entry: str, data: bytes) -> str:
    digest = hashlib.sha256(entry.encode() + b"\0")  # the name too: an entry copied under another key fails
    digest.update(data)
    return digest.hexdigest() + "\n"


def get(entry: str) -> str | None:
    """The entry's text, if it is there and matches the digest recorded when it was stored."""
    folder = directory()
    if folder is None:
        return None
    try:
        data = (folder / entry).read_bytes()
    except OSError:
        return None
    try:
        recorded = (folder / DIGESTS / entry).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        recorded = None
    if recorded != _digest(entry, data):
        warn(entry, "its content does not match the digest recorded when it was stored")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        warn(entry, "it is not UTF-8 text")
        return None


def warn(entry: str, why: str) -> None:
    """Say on stderr that a cache entry is not used, and why (the work is done again)."""
    print(f"warning: cache entry {entry[:60]} not used: {why}; generating it afresh", file=sys.stderr)


def put(entry: str, text: str) -> None:
    folder = directory()
    if folder is None:
        return
    data = text.encode("utf-8")
    try:
        _write(folder, entry, data)
        _write(folder / DIGESTS, entry, _digest(entry, data).encode())
    except OSError:
        pass


def _write(folder: Path, name: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False, suffix=".tmp") as tmp:
        tmp.write(data)
    os.replace(tmp.name, folder / name)  # readers see a whole file or none
