"""Build a generated package's MCPB bundle: stage the bundle's tree in a temporary folder, zip it,
and move the archive into place only when everything succeeded."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typed_mcp.errors import TypedMcpError
from typed_mcp.mcpb import archive, vendor
from typed_mcp.mcpb.manifest import ENTRY_POINT, LIB, bundle_manifest
from typed_mcp.render.package import environment
from typed_mcp.write import MANIFEST

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
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
    catalog = _read_json(source / "catalog.json", "the package has no tool catalog (regenerate it)")
    if constraints is not None and not constraints.is_file():
        raise BundleError(f"{constraints}: no such constraints file")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".typed-mcp-bundle-", dir=out.parent) as staging:
        root = Path(staging) / "bundle"
        server = root / "server"
        shutil.copytree(source, server / meta["module"], ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        vendor.install(list(project.get("dependencies", [])), root / LIB, constraints)
        (server / "requirements.txt").write_text("\n".join(vendor.installed(root / LIB)) + "\n", encoding="utf-8")
        main = environment().get_template("bundle/main.py.j2").render(package=meta["package"], module=meta["module"])
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


def _read_json(path: Path, missing: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise BundleError(f"{path}: {missing}") from None
    except ValueError as exc:
        raise BundleError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{path}: not a JSON object")
    return data


def _pyproject(path: Path) -> dict[str, Any]:
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project")
    except FileNotFoundError:
        raise BundleError(f"{path}: not a package typed-mcp generated") from None
    except tomllib.TOMLDecodeError as exc:
        raise BundleError(f"{path}: not TOML ({exc})") from None
    if not isinstance(project, dict):
        raise BundleError(f"{path}: no [project] table")
    return project
