"""Step 6: put the rendered files on disk all at once, or not at all.

Files are written to a temporary folder beside the target, then swapped in with renames, so a
failure at any point leaves the target exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from typed_mcp.errors import OutputError

MANIFEST = "typed-mcp.json"
# Folders that tools write next to sources (bytecode, linter and test caches): never part of a package.
CACHES = frozenset({"__pycache__", ".ruff_cache", ".mypy_cache", ".pytest_cache"})


@contextlib.contextmanager
def staged(out: Path, files: dict[str, str | bytes]) -> Iterator[Path]:
    """Write `files` to a staging folder beside `out` and yield it (the caller may add files);
    then swap it in for `out`. If anything fails, `out` stays exactly as it was."""
    out = out.resolve()
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise OutputError(f"{out}: refusing to replace a non-empty folder that typed-mcp did not write (no {MANIFEST})")
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=parent))
    except OSError as exc:
        raise OutputError(f"{parent}: cannot write ({exc.strerror})") from None
    try:
        write_files(staging, files)
        yield staging
        swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_files(folder: Path, files: dict[str, str | bytes]) -> None:
    made: set[Path] = set()  # a big API's thousands of tool modules share a few folders
    for relative, content in sorted(files.items()):
        target = folder / relative
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(content)


def swap_in(staging: Path, out: Path) -> None:
    if out.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, retired / out.name)
        try:
            os.replace(staging, out)
        except OSError:
            os.replace(retired / out.name, out)  # put the old tree back
            raise
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, out)


def write_file_atomically(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def tree_files(root: Path) -> dict[str, Path]:
    """Everything in the folder `root` but its folders, by path relative to it (with `/`): files,
    and symbolic links (never followed), but not what is in CACHES. Empty when `root` is no folder."""
    found: dict[str, Path] = {}
    if not root.is_dir():
        return found
    start = len(str(root)) + 1
    for folder, subfolders, names in os.walk(root):
        linked = [name for name in subfolders if os.path.islink(os.path.join(folder, name))]
        subfolders[:] = sorted(name for name in subfolders if name not in CACHES and name not in linked)
        relative = folder[start:].replace(os.sep, "/")
        for name in [*names, *linked]:
            found[f"{relative}/{name}" if relative else name] = Path(folder, name)
    return found
