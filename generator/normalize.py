"""Step 2: check the document's version and give later steps one way to follow `$ref`s.

Everything after this step reads OpenAPI 3.x through `Document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from generator.errors import SpecError
from generator.load import LoadedSpec

SUPPORTED = ("3.0.", "3.1.", "3.2.")
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass
class Document:
    """An OpenAPI 3.x document plus `$ref` resolution with clear errors."""

    data: dict[str, Any]
    origin: str
    version: str
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def resolve_pointer(self, ref: str) -> Any:
        if ref in self._cache:
            return self._cache[ref]
        if not ref.startswith("#"):
            raise SpecError(f"external $ref {ref!r} is not supported", source=self.origin, pointer=ref)
        node: Any = self.data
        for token in ref[1:].split("/")[1:] if ref != "#" else []:
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise SpecError("$ref points at nothing", source=self.origin, pointer=ref)
        self._cache[ref] = node
        return node

    def deref(self, node: Any, pointer: str) -> tuple[Any, str]:
        """Follow `$ref` chains on an object; returns the target and the pointer it lives at."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise SpecError("circular $ref", source=self.origin, pointer=pointer)
            seen.add(ref)
            node, pointer = self.resolve_pointer(ref), ref
        return node, pointer


def normalize(spec: LoadedSpec) -> Document:
    data = spec.document
    if "swagger" in data:
        raise SpecError(
            f"Swagger {data.get('swagger')} documents are not supported yet; convert to OpenAPI 3 first",
            source=spec.origin,
            pointer="#/swagger",
        )
    version = data.get("openapi")
    if not isinstance(version, str):
        raise SpecError("missing the 'openapi' version field: not an OpenAPI 3 document", source=spec.origin)
    if not version.startswith(SUPPORTED):
        raise SpecError(f"OpenAPI {version} is not supported (3.0, 3.1 and 3.2 are)", source=spec.origin, pointer="#/openapi")
    paths = data.get("paths", {})
    if paths is not None and not isinstance(paths, dict):
        raise SpecError("'paths' must be an object", source=spec.origin, pointer="#/paths")
    return Document(data=data, origin=spec.origin, version=version)
