"""Step 2: check the document's version and give later steps one way to follow `$ref`s.

Everything after this step reads OpenAPI 3.x through `Document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typed_mcp import pointer
from typed_mcp.errors import SpecError
from typed_mcp.spec import keywords, shapes, swagger2
from typed_mcp.spec.bundle import Bundler, has_external_refs, hoist_borrowed
from typed_mcp.spec.load import LoadedSpec

SUPPORTED = ("3.0.", "3.1.", "3.2.")
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass
class Document:
    """An OpenAPI 3.x document plus `$ref` resolution with clear errors."""

    data: dict[str, Any]
    origin: str
    version: str
    # One malformed part costs that part only: what was read in a degraded way ("pointer: what was
    # done", spec/shapes.py), and operations that cannot be generated ("METHOD /path" -> reason).
    degraded: list[str] = field(default_factory=list)
    unusable: dict[str, str] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def resolve_pointer(self, ref: str) -> Any:
        if ref in self._cache:
            return self._cache[ref]
        if not ref.startswith("#"):
            raise SpecError(f"external $ref {ref!r} is not supported here", source=self.origin, pointer=ref)
        try:
            node = pointer.get(self.data, ref)
        except KeyError:
            raise SpecError("$ref points at nothing", source=self.origin, pointer=ref) from None
        self._cache[ref] = node
        return node

    def deref(self, node: Any, at: str) -> tuple[Any, str]:
        """Follow `$ref` chains on an object; returns the target and the pointer it lives at."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise SpecError("circular $ref", source=self.origin, pointer=at)
            seen.add(ref)
            node, at = self.resolve_pointer(ref), ref
        return node, at


def normalize(
    spec: LoadedSpec, *, allow_remote_refs: bool = False, allow_private_refs: bool = False, ref_root: Path | None = None
) -> Document:
    data = spec.document
    degraded: list[str] = []
    unusable: dict[str, str] = {}
    if has_external_refs(data):
        base = spec.base_dir if spec.base_dir is not None else (spec.url or "").rsplit("/", 1)[0] + "/"
        # The root file as the bundler knows files (real path, or URL without query): refs back to it stay local.
        root_file = str(Path(spec.origin).resolve()) if spec.url is None else spec.url.split("#")[0].split("?")[0]
        data = Bundler(
            data,
            base,
            spec.origin,
            allow_remote=allow_remote_refs,
            allow_private=allow_private_refs,
            root=ref_root,
            root_file=root_file,
        ).bundle()
    hoist_borrowed(data)  # in place, as declare_required; before Swagger's refs move to OpenAPI 3's places
    if "swagger" in data:
        if str(data.get("swagger")) != "2.0":
            raise SpecError(
                f"Swagger {data.get('swagger')} is not supported (2.0 is)", source=spec.origin, pointer="#/swagger"
            )
        try:
            data = swagger2.convert(data, unusable=unusable, notes=degraded)
        except swagger2.ConversionError as exc:
            raise SpecError(f"cannot convert Swagger 2.0: {exc}", source=spec.origin) from None
    version = data.get("openapi")
    if not isinstance(version, str):
        raise SpecError("missing the 'openapi' version field: not an OpenAPI 3 document", source=spec.origin)
    if not version.startswith(SUPPORTED):
        raise SpecError(
            f"OpenAPI {version} is not supported (3.0, 3.1 and 3.2 are)", source=spec.origin, pointer="#/openapi"
        )
    paths = data.get("paths", {})
    if paths is not None and not isinstance(paths, dict):
        raise SpecError("'paths' must be an object", source=spec.origin, pointer="#/paths")
    degraded += shapes.check(data)  # in place, as declare_required (the snapshot is the raw bytes)
    declare_required(data)
    return Document(data=data, origin=spec.origin, version=version, degraded=degraded, unusable=unusable)


_COMPOSITION = ("allOf", "anyOf", "oneOf")


def declare_required(node: Any, composed: bool = False, named: bool = False) -> None:
    """A property listed in `required` but not declared under `properties` becomes declared (of
    any type), so models require it too; otherwise a tool could send a body the API rejects.
    Skipped inside compositions, where the declaration may sit in a sibling schema. `named`: `node`
    maps names to schemas (or to objects of the document)."""
    if isinstance(node, list):
        for item in node:
            declare_required(item, composed)
        return
    if not isinstance(node, dict):
        return
    properties, required = node.get("properties"), node.get("required")
    if (
        not named
        and not composed
        and isinstance(properties, dict)
        and isinstance(required, list)
        and not any(k in node for k in _COMPOSITION)
    ):
        for name in required:
            if isinstance(name, str) and name not in properties:
                properties[name] = {}
    for key, value, inner in keywords.schema_items(node, named, names=keywords.DOCUMENT_NAMED):
        declare_required(value, composed or not named and key in _COMPOSITION, inner)
