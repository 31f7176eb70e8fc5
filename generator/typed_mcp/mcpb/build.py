"""Build a generated package's MCPB bundle: stage the bundle's tree in a temporary folder, zip it,
and move the archive into place only when everything succeeded."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typed_mcp.errors import TypedMcpError
from typed_mcp.mcpb import archive, vendor
from typed_mcp.mcpb.manifest import ENTRY_POINT, LIB, bundle_manifest
from typed_mcp.render.package import templates
from typed_mcp.write import MANIFEST

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class BundleError(TypedMcpError):
    """The folder is not a package a bundle can be built from."""


@dataclass(frozen=True)
class Bundle:
    path: Path
    entries: int
    size: int
    sha256: str


def build_bundle(package: Path, out: Path, *, constraints: Path | None = None, author: str = "typed-mcp") -> Bundle:
    """Write the `.mcpb` of the generated package in `package` to `out`. `constraints` pins the
    vendored dependencies (a pip constraints file): with it, the same package gives the same bytes."""
    meta = _read_json(package / MANIFEST, "not a package typed-mcp generated")
    if "environment" not in meta:
        raise BundleError(f"{package / MANIFEST}: no 'environment': regenerate the package with this typed-mcp")
    if not str(meta.get("module", "")).isidentifier():  # it names folders and an import
        raise BundleError(f"{package / MANIFEST}: 'module' is not a Python identifier")
    project = _pyproject(package / "pyproject.toml")
    source = package / "src" / meta["module"]
    _own_folder(package / "src")
    files = _package_files(source)  # everything is checked before anything is read or written
    catalog = _read_json(source / "catalog.json", "the package has no tool catalog (regenerate it)")
    if constraints is not None and not constraints.is_file():
        raise BundleError(f"{constraints}: no such constraints file")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".typed-mcp-bundle-", dir=out.parent) as staging:
        root = Path(staging) / "bundle"
        server = root / "server"
        _copy_files(source, server / meta["module"], files)
        vendor.install(list(project.get("dependencies", [])), root / LIB, constraints)
        (server / "requirements.txt").write_text("\n".join(vendor.installed(root / LIB)) + "\n", encoding="utf-8")
        main = templates().get_template("bundle/main.py.j2").render(package=meta["package"], module=meta["module"])
        (root / ENTRY_POINT).write_text(main, encoding="utf-8")
        manifest = bundle_manifest(
            meta,
            str(project.get("description", "")),
            catalog.get("tools", []),
            author=author,
            python=sys.version_info[:2],
            platform=sys.platform,
        )
        (root / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        staged = Path(staging) / out.name
        try:
            entries = archive.write_zip(root, staged)
        except ValueError as exc:
            raise BundleError(str(exc)) from exc
        os.replace(staged, out)
    data = out.read_bytes()
    return Bundle(out, entries, len(data), hashlib.sha256(data).hexdigest())


# A package's own files only: a symbolic link or a hard link would put a file from elsewhere on the
# machine into the bundle (and so into the hands of whoever installs it); a FIFO, socket or device
# is no file to copy, and reading one can block for ever. Hard links are not told apart from files by
# their content: a regular file with more than one name (st_nlink > 1) is refused, as a generated
# package never has one; `cp -r` of the folder makes each a file of its own.
_IGNORED = ("__pycache__",)


def _refusal(path: Path, info: os.stat_result) -> str | None:
    """Why the entry at `path` (its `lstat`) cannot go into a bundle, or None for a regular file."""
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link: a bundle holds the package's own files only (put the file itself there)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a FIFO, socket or device): it cannot go into a bundle"
    if info.st_nlink > 1:
        return (
            f"a hard link (the file has {info.st_nlink} names), so possibly a file from elsewhere: "
            "make it a file of its own (cp) to bundle it"
        )
    return None


def _own_folder(path: Path) -> None:
    """A folder of the package itself, not a symbolic link to one elsewhere."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise BundleError(f"{path}: not a package typed-mcp generated (no such folder)") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise BundleError(f"{path}: a symbolic link or not a folder: a bundle holds the package's own files only")


def _package_files(folder: Path) -> dict[str, os.stat_result]:
    """Every file under the package folder (`/`-separated paths relative to it, with their `lstat`),
    without byte code; one that cannot go into a bundle is a BundleError naming it."""
    _own_folder(folder)
    files: dict[str, os.stat_result] = {}
    pending = [folder]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                path, info = Path(entry.path), entry.stat(follow_symlinks=False)
                if entry.name in _IGNORED or entry.name.endswith(".pyc"):
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append(path)
                    continue
                refusal = _refusal(path, info)
                if refusal:
                    raise BundleError(f"{path}: {refusal}")
                files[path.relative_to(folder).as_posix()] = info
    return files


def _copy_files(folder: Path, target: Path, files: dict[str, os.stat_result]) -> None:
    """Copy `files` (from `_package_files`), each read from the very file that was checked: opened
    without following a link or waiting on a FIFO, and refused if it is not that file any more."""
    for name in sorted(files):
        data, mode = _read_checked(folder / name, files[name])
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
        destination.chmod(stat.S_IMODE(mode) | stat.S_IRUSR | stat.S_IWUSR)


def _read_checked(path: Path, expected: os.stat_result | None = None) -> tuple[bytes, int]:
    """The bytes and mode of the regular file at `path` (checked by its `lstat`, or `expected`),
    opened without following a symbolic link (O_NOFOLLOW) or blocking on a FIFO (O_NONBLOCK), and
    checked again on the open file: one swapped in since is refused. FileNotFoundError: the caller
    says what a missing file means."""
    if expected is None:
        expected = path.lstat()
        refusal = _refusal(path, expected)
        if refusal:
            raise BundleError(f"{path}: {refusal}")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP: a symbolic link swapped in
        raise BundleError(f"{path}: changed while the bundle was built ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if _refusal(path, info) or (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
            raise BundleError(f"{path}: changed while the bundle was built")
        return handle.read(), info.st_mode


def _read_json(path: Path, missing: str) -> dict[str, Any]:
    try:
        data = json.loads(_read_checked(path)[0])
    except FileNotFoundError:
        raise BundleError(f"{path}: {missing}") from None
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the decoder goes
        raise BundleError(f"{path}: not JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{path}: not a JSON object")
    return data


def _pyproject(path: Path) -> dict[str, Any]:
    try:
        project = tomllib.loads(_read_checked(path)[0].decode("utf-8")).get("project")
    except FileNotFoundError:
        raise BundleError(f"{path}: not a package typed-mcp generated") from None
    except UnicodeDecodeError:
        raise BundleError(f"{path}: not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError, an integer past Python's limit, nesting
        raise BundleError(f"{path}: not TOML ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(project, dict):
        raise BundleError(f"{path}: no [project] table")
    return project
