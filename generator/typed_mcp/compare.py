"""Drift and catalogs of sources: regenerate a source into a temporary folder and compare it with a
committed package, or list the catalog of a spec that has no package yet."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from typed_mcp.catalog import diff
from typed_mcp.catalog.listing import catalog_of_package, is_package
from typed_mcp.options import GenerateOptions
from typed_mcp.pipeline import generate, load_inputs
from typed_mcp.write import tree_files


@dataclass
class Drift:
    problems: list[str] = field(default_factory=list)  # one line each; none: no drift
    catalog_changes: list[diff.Change] | None = None  # None: not compared (no package to compare)


def check(options: GenerateOptions) -> Drift:
    """What differs between `options.out` (and the snapshot `options.snapshot`) and what
    `options.source` generates now. Nothing of the committed files is touched."""
    drift = Drift()
    with tempfile.TemporaryDirectory(prefix="typed-mcp-check-") as temp:
        fresh = Path(temp) / (options.out.name or "package")
        fetched = Path(temp) / (options.snapshot.name if options.snapshot else "spec")
        # Nothing is saved beside the committed files: the fetched spec goes to the temporary folder.
        fresh_options = dataclasses.replace(
            options, out=fresh, snapshot=fetched if options.snapshot else None, default_snapshot=False, verify=False
        )
        loaded = load_inputs(fresh_options)  # fetched once, for both what follows
        recognized = loaded.recognizes(options.out, verify=False)
        if recognized is not None and (options.snapshot is None or _holds(options.snapshot, loaded.spec.raw)):
            return drift  # the run cache knows the committed files are what the spec generates now
        generate(fresh_options, loaded=loaded)
        snapshot = options.snapshot
        if snapshot is not None and (not snapshot.is_file() or snapshot.read_bytes() != fetched.read_bytes()):
            drift.problems.append(f"the spec differs from the snapshot {snapshot}")
        changed = tree_changes(options.out, fresh)
        if changed:
            more = " ..." if len(changed) > 5 else ""
            drift.problems.append(f"{len(changed)} generated file(s) differ: {', '.join(changed[:5])}{more}")
        if changed and is_package(options.out):
            drift.catalog_changes = diff.diff_catalogs(catalog_of_package(options.out), catalog_of_package(fresh))
    return drift


def _holds(path: Path, content: bytes) -> bool:
    try:
        return path.read_bytes() == content
    except OSError:
        return False


def tree_changes(old: Path, new: Path) -> list[str]:
    """The relative paths of the files that differ between two folders (missing on one side included)."""

    def files(root: Path) -> dict[str, bytes | str]:
        # A link is compared as where it points: a generated package has none.
        return {
            name: os.readlink(path) if path.is_symlink() else path.read_bytes()
            for name, path in tree_files(root).items()
        }

    before, after = files(old), files(new)
    missing = object()
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name, missing) != after.get(name, missing)
    )


def catalog_of(source: str, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A catalog from a generated package folder, or from a spec (file or URL) generated on the fly."""
    if is_package(source):
        return catalog_of_package(Path(source))
    with tempfile.TemporaryDirectory(prefix="typed-mcp-catalog-") as temp:
        out = Path(temp) / "package"
        generate(
            GenerateOptions(source=source, out=out, package_name="catalog-mcp", headers=headers or {}, verify=False)
        )
        return catalog_of_package(out)


def major_bumped(old: str | None, new: str | None) -> bool:
    try:
        return Version(new or "0").major > Version(old or "0").major
    except InvalidVersion:
        return False
