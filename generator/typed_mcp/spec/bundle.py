"""Multi-file documents: bring every external `$ref` into the one document, as a local `$ref`.

Relative file references resolve from the folder of the file that holds them. A referenced
schema lands under the document's schemas (`definitions` or `components.schemas`), a parameter
under its parameters, a response under its responses, named after its pointer or file; anything
else is copied in place. Remote (http) references are refused unless allowed: a spec must not
make the build fetch arbitrary URLs.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from typed_mcp import names, pointer
from typed_mcp.errors import SpecError
from typed_mcp.spec.load import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, fetch, parse, redact_url, shown

_SCHEMA_KEYS = {"schema", "items", "additionalProperties", "not", "additionalItems", "contains", "propertyNames"}
_SCHEMA_LIST_KEYS = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SCHEMA_MAP_KEYS = {"properties", "patternProperties", "definitions", "$defs", "schemas"}
_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def has_external_refs(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(has_external_refs(v) for v in node.values())
    if isinstance(node, list):
        return any(has_external_refs(v) for v in node)
    return False


class Bundler:
    def __init__(
        self,
        document: dict[str, Any],
        base: Path | str,
        origin: str,
        *,
        allow_remote: bool = False,
        allow_private: bool = False,
        root: Path | None = None,
    ) -> None:
        self.document = copy.deepcopy(document)
        self.base = base  # the root file's folder, or its URL
        self.origin = origin
        self.allow_remote = allow_remote
        self.allow_private = allow_private  # remote refs may reach loopback, private and link-local addresses
        # Local refs stay inside this folder (real paths: a symlink cannot lead out of it).
        self.root = (root or (base if isinstance(base, Path) else None) or Path.cwd()).resolve()
        self.swagger = "swagger" in document
        self._files: dict[str, dict[str, Any]] = {}
        self._placed: dict[tuple[str, str], str] = {}  # (file, pointer) -> local $ref
        self._taken: dict[str, set[str]] = {}

    def bundle(self) -> dict[str, Any]:
        root = "<root>"
        self._files[root] = self.document
        self._rewrite(self.document, root, self.base, "other")
        return self.document

    # -- walking ---------------------------------------------------------------------------------

    def _rewrite(self, node: Any, file: str, folder: Path | str, kind: str) -> None:
        """Replace external refs in `node` (which lives in `file`) by local ones, in place."""
        if isinstance(node, list):
            for item in node:
                self._rewrite(item, file, folder, kind)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and (not ref.startswith("#") or file != "<root>"):
            node["$ref"] = self._local(ref, file, folder, kind)
        for key, value in list(node.items()):  # placing a target may add sections to the root
            if key == "$ref":
                continue
            if key in _SCHEMA_KEYS:
                self._rewrite(value, file, folder, "schema")
            elif key in _SCHEMA_LIST_KEYS:
                self._rewrite(value, file, folder, "schema")
            elif key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
                for sub in value.values():
                    self._rewrite(sub, file, folder, "schema")
            elif key == "parameters" and isinstance(value, list):
                for sub in value:
                    self._rewrite(sub, file, folder, "parameter")
            elif key == "responses" and isinstance(value, dict):
                for sub in value.values():
                    self._rewrite(sub, file, folder, "response")
            else:
                self._rewrite(value, file, folder, "other")

    def _local(self, ref: str, file: str, folder: Path | str, kind: str) -> str:
        target, _, fragment = ref.partition("#")
        where = "#" + fragment
        if not target:  # a local ref inside an external file points into that file
            target_file, target_folder = file, folder
        else:
            target_file, target_folder = self._locate(target, folder, ref)
        if target_file == "<root>":
            return where
        key = (target_file, where)
        if key in self._placed:
            return self._placed[key]
        content = copy.deepcopy(_resolve(self._load(target_file), where, target_file))
        section = self._section(kind)
        if section is None:  # not a schema, parameter or response: copy it in place
            self._rewrite(content, target_file, target_folder, kind)
            self._placed[key] = self._store_other(content, key)
            return self._placed[key]
        name = self._name(section, target_file, where)
        local = "#/" + "/".join(pointer.escape(part) for part in (*section, name))
        self._placed[key] = local  # before recursing: recursive schemas end here
        self._container(section)[name] = content
        self._rewrite(content, target_file, target_folder, kind)
        return local

    # -- placing -----------------------------------------------------------------------------------

    def _section(self, kind: str) -> tuple[str, ...] | None:
        if self.swagger:
            return {"schema": ("definitions",), "parameter": ("parameters",), "response": ("responses",)}.get(kind)
        return {
            "schema": ("components", "schemas"),
            "parameter": ("components", "parameters"),
            "response": ("components", "responses"),
        }.get(kind)

    def _container(self, section: tuple[str, ...]) -> dict[str, Any]:
        node = self.document
        for part in section:
            node = node.setdefault(part, {})
        return node

    def _name(self, section: tuple[str, ...], file: str, where: str) -> str:
        parts = pointer.tokens(where)
        wanted = (parts[-1] if parts else "") or Path(urlsplit(file).path).stem or "External"
        taken = self._taken.setdefault("/".join(section), set(self._container(section)))
        name = wanted if wanted not in taken else f"{wanted}_{names.short_hash(file + where, 6)}"
        taken.add(name)
        return name

    def _store_other(self, content: Any, key: tuple[str, str]) -> str:
        name = f"{Path(urlsplit(key[0]).path).stem}_{names.short_hash(key[0] + key[1], 6)}"
        self.document.setdefault("x-typed-mcp-external", {})[name] = content
        return f"#/x-typed-mcp-external/{name}"

    # -- files ------------------------------------------------------------------------------------

    def _locate(self, target: str, folder: Path | str, ref: str) -> tuple[str, Path | str]:
        scheme = urlsplit(target).scheme
        if scheme in ("http", "https") or (isinstance(folder, str) and not scheme):
            url = target if scheme else urljoin(str(folder), target)
            if not self.allow_remote:
                raise SpecError(
                    f"remote $ref {redact_url(url)!r} refused (pass --allow-remote-refs to fetch it)",
                    source=self.origin,
                    pointer=ref,
                )
            return url, url.rsplit("/", 1)[0] + "/"
        if scheme or target.startswith("/"):
            raise SpecError(
                f"$ref {target!r}: only relative file references are allowed", source=self.origin, pointer=ref
            )
        path = (Path(folder) / unquote(target)).resolve()
        if not path.is_relative_to(self.root):
            raise SpecError(
                f"$ref {target!r} leaves the spec's folder {self.root} (pass --ref-root to widen it)",
                source=self.origin,
                pointer=ref,
            )
        if path.suffix.lower() not in _FILE_SUFFIXES:
            raise SpecError(
                f"$ref {target!r}: only .json, .yaml and .yml files can be referenced", source=self.origin, pointer=ref
            )
        if not path.is_file():
            raise SpecError(f"$ref {target!r}: no such file {path}", source=self.origin, pointer=ref)
        return str(path), path.parent

    def _load(self, file: str) -> dict[str, Any]:
        if file not in self._files:
            if file.startswith(("http://", "https://")):
                raw, content_type = fetch(
                    file,
                    headers={},
                    timeout=DEFAULT_TIMEOUT,
                    max_bytes=DEFAULT_MAX_BYTES,
                    public_only=not self.allow_private,
                )
                fmt = "yaml" if "yaml" in content_type or file.endswith((".yaml", ".yml")) else "json"
            else:
                raw = Path(file).read_bytes()
                fmt = "yaml" if file.endswith((".yaml", ".yml")) else "json"
            self._files[file] = parse(raw, origin=shown(file), fmt=fmt)
        return self._files[file]


def _resolve(document: Any, ref: str, file: str) -> Any:
    try:
        return pointer.get(document, ref)
    except KeyError:
        raise SpecError("$ref points at nothing", source=shown(file), pointer=ref) from None
