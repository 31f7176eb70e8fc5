"""Post-hook: the package's Python sources are made to pass its own ruff configuration (imports
sorted and grouped, unused ones removed) and formatted as `ruff format` writes them, by ruff itself,
as openapi-python-client does with its post-hooks. The layout of code holding the spec's text (a
long description, a model's field) depends on that text, so no template can write it formatted.
Only these fixes and the formatter run, and ruff is locked, so the output stays byte-identical."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typed_mcp.errors import ToolchainError

FIXES = "I,F401"  # import order (the models are cut from one generated module) and imports a cut left unused


def tidy(root: Path, files: dict[str, str | bytes], targets: tuple[str, ...] = ("src",)) -> None:
    """Fix the Python files of `files`, written out under `root` (which holds their `pyproject.toml`),
    in place and in `files`. `targets`: the files and folders under `root` that ruff fixes, which
    hold those of `files` (a folder rather than its thousands of files: a command line is bounded)."""
    sources = sorted(path for path in files if path.endswith(".py"))
    if not sources:
        return
    config = ["--no-cache", "--quiet", "--config", str(root / "pyproject.toml"), *targets]
    # The import fixes first: the formatter then lays out the imports they leave.
    for command in (["check", "--fix", "--select", FIXES, "--exit-zero"], ["format"]):
        proc = subprocess.run(
            [sys.executable, "-m", "ruff", *command, *config], cwd=root, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise ToolchainError(
                f"internal error: ruff could not tidy the generated sources: {proc.stderr.strip()[-300:]}"
            )
    for path in sources:
        files[path] = (root / path).read_text(encoding="utf-8")
