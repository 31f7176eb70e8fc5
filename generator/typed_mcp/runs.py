"""The run cache: it recognizes a package folder that is already what its inputs generate.

Regenerating a big API whose spec did not change (`make generate` after a pull, the drift check)
would otherwise plan, generate models, render and list thousands of tools to write the same bytes
again. After each successful run, a record of every file the run wrote (its path and SHA-256) is
stored under a key made of everything the output depends on: the spec's bytes and where they came
from, the overlays' and the config's contents, every option (but the few that cannot change the
output, `_NOT_OUTPUT`), the generator's own code and the versions of the libraries it runs
(`cache.key`). A later run with the same key compares the folder on disk with the record; when
they match file for file, and no other file is there, the run is over: nothing is written.

Nothing read from the cache is ever written or imported. A record can only vouch for files that
are already in the folder, so a damaged or planted one gives nothing that writing the folder would
not; at worst it lets a run leave a folder as it is (`--no-cache` always does the work). A spec whose
`$ref`s reach other files is never recognized: their contents are not part of the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typed_mcp import cache
from typed_mcp.catalog.budget import Report
from typed_mcp.spec.bundle import has_external_refs
from typed_mcp.spec.load import LoadedSpec
from typed_mcp.write import MANIFEST, tree_files

if TYPE_CHECKING:
    from typed_mcp.options import GenerateOptions
    from typed_mcp.plan.ir import ApiPlan

FORMAT = 1
# Options that cannot change what is written: where it goes, how the spec is fetched (its bytes are
# in the key), whether the cache is used, the config (its contents are in the key), and `verify`,
# which only decides whether a run may fail (a record says whether its run verified). Of the snapshot
# options, only the spec file's name reaches the output (`_spec_file`).
_NOT_OUTPUT = frozenset({"out", "headers", "cache", "config", "verify", "snapshot", "default_snapshot"})


@dataclass(frozen=True)
class Summary:
    """What the command line says after a run: from the plan, or from the run cache's record."""

    package_name: str
    module: str
    tools: int
    structured: int  # tools with an outputSchema
    skipped: tuple[tuple[str, str], ...]  # (operation, reason)
    warnings: tuple[str, ...]
    degraded: tuple[str, ...]
    curated: bool
    excluded: int  # operations the curation excluded
    changed: int  # operations the curation changed
    registry_name: str | None
    catalog: Report  # the tool catalog's size, its biggest tools, the tools the schema budget trimmed

    @classmethod
    def of(cls, api: ApiPlan, catalog: Report) -> Summary:
        """From the plan and the figures of its `catalog.json`."""
        return cls(
            catalog=catalog,
            package_name=api.package_name,
            module=api.module,
            tools=len(api.operations),
            structured=sum(1 for op in api.operations if op.has_output_schema),
            skipped=tuple((s.key, s.reason) for s in api.skipped),
            warnings=tuple(api.warnings),
            degraded=tuple(api.degraded),
            curated=bool(api.curation),
            excluded=sum(1 for entry in api.curation if entry["action"] == "excluded"),
            changed=len({e["operation"] for e in api.curation if e["action"] != "excluded" and e["operation"] != "*"}),
            registry_name=api.listing.registry_name,
        )

    @classmethod
    def load(cls, data: Any) -> Summary:
        """From a record's `summary`; ValueError when it is not one."""
        if not isinstance(data, dict) or set(data) != {f.name for f in dataclasses.fields(cls)}:
            raise ValueError("not a run summary")
        try:
            figures = data["catalog"]
            summary = cls(
                **{
                    **data,
                    "skipped": tuple((str(key), str(reason)) for key, reason in data["skipped"]),
                    "warnings": tuple(map(str, data["warnings"])),
                    "degraded": tuple(map(str, data["degraded"])),
                    "catalog": Report(
                        tools=int(figures["tools"]),
                        catalog_bytes=int(figures["catalog_bytes"]),
                        biggest=[(str(name), int(size)) for name, size in figures["biggest"]],
                        trimmed={str(name): int(depth) for name, depth in figures["trimmed"].items()},
                        budget=int(figures["budget"]),
                    ),
                }
            )
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise ValueError(f"not a run summary ({exc!r})") from None
        for name, kind in (("package_name", str), ("module", str), ("tools", int), ("structured", int)):
            if not isinstance(getattr(summary, name), kind):
                raise ValueError(f"not a run summary ({name})")
        return summary


def key(spec: LoadedSpec, overlays: list[tuple[str, str]], options: GenerateOptions) -> str | None:
    """The run's key, or None when the cache is off. `overlays`: each overlay applied, (file name,
    SHA-256). A run whose `$ref`s reach other files is never recorded (`record`), so its key finds
    nothing: the same bytes give the same document, and so the same answer."""
    if cache.directory() is None:
        return None
    asked = {f.name: repr(getattr(options, f.name)) for f in dataclasses.fields(options) if f.name not in _NOT_OUTPUT}
    config = options.config
    about = {
        "origin": spec.origin,
        "url": spec.url,
        "format": spec.format,
        "overlays": overlays,
        "config": [str(config.path), config.sha256] if config is not None else None,
        "profile": options.chosen_profile.value,
        "spec_file": _spec_file(spec, options),
        "options": asked,
    }
    return cache.key("run", json.dumps(about, sort_keys=True), spec.raw)


def _spec_file(spec: LoadedSpec, options: GenerateOptions) -> str:
    """What decides the spec file name that typed-mcp.json and the README give (pipeline.snapshot_path):
    the snapshot's name; by default, for a fetched spec, one made of the package name (whose inputs
    are in the key); else the name of the file read (its origin is in the key)."""
    if options.snapshot is not None:
        return f"snapshot {options.snapshot.name}"
    if options.default_snapshot and spec.url is not None:
        return "default snapshot"
    return "origin"


def record(entry: str, spec: LoadedSpec, files: Mapping[str, str | bytes], summary: Summary, *, verified: bool) -> None:
    """Store what a successful run of `spec` wrote under its key, unless `$ref`s reach other files."""
    if has_external_refs(spec.document):
        return
    data = {
        "format": FORMAT,
        "verified": verified,
        "files": {path: _sha256(_bytes(content)) for path, content in sorted(files.items())},
        "summary": dataclasses.asdict(summary),
    }
    cache.put(entry, json.dumps(data, ensure_ascii=False))


def recognize(entry: str, out: Path, *, verify: bool) -> tuple[Summary, FolderFiles] | None:
    """When `out` holds exactly the files recorded under `entry` (by a verified run, if `verify`):
    the run's summary and the folder's files. Else None."""
    text = cache.get(entry)
    if text is None:
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
            raise ValueError("not a run record")
        summary = Summary.load(data.get("summary"))
    except ValueError as exc:  # json's errors are ValueErrors
        cache.warn(entry, str(exc))
        return None
    if verify and data.get("verified") is not True:
        return None
    expected: dict[str, Any] = data["files"]
    if MANIFEST not in expected:
        return None
    found = tree_files(out)
    if found.keys() != expected.keys():
        return None
    for relative, path in found.items():
        if path.is_symlink() or not path.is_file():  # a fresh run would replace it with a file
            return None
        try:
            if _sha256(path.read_bytes()) != expected[relative]:  # one file at a time in memory
                return None
        except OSError:
            return None
    return summary, FolderFiles(found)


class FolderFiles(Mapping[str, str | bytes]):
    """A package folder's files by relative path, each read when asked for (as text when it is UTF-8):
    what a recognized run gives its caller without holding a big package in memory."""

    def __init__(self, files: Mapping[str, Path]) -> None:
        self._files = dict(files)

    def __getitem__(self, name: str) -> str | bytes:
        return _text(self._files[name].read_bytes())

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _bytes(content: str | bytes) -> bytes:
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _text(content: bytes) -> str | bytes:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return content
