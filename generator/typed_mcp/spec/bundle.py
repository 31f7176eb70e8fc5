"""Multi-file documents: bring every external `$ref` into the one document, as a local `$ref`.

Relative file references resolve from the folder of the file that holds them, at any depth, and a
`#/...` ref inside an external file points into that file. A file is known by its real path, so
`a/../b.yml` and `b.yml` (and the root file itself, reached from below) are one file, whose each
target lands once. A referenced schema lands under the document's schemas (`definitions` or
`components.schemas`), a parameter under its parameters, a response under its responses, named
after its pointer or file (or after the root's own component that refs it: one schema, not an
alias beside a copy); anything else (a path item, an operation: Redocly's split layout) is copied
in place. Remote (http) references are refused unless allowed: a spec must not make the build
fetch arbitrary URLs.

Within the one document, `hoist_borrowed` makes a component of every schema that a schema `$ref`
borrows from elsewhere (another operation's answer, a parameter's schema): the models are
generated from the components alone.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from typed_mcp import names, pointer
from typed_mcp.errors import SpecError
from typed_mcp.spec.load import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT,
    MAX_ALIAS_NODES,
    fetch,
    parse,
    read_file,
    redact_url,
    shown,
    size,
)

_SCHEMA_KEYS = {"schema", "items", "additionalProperties", "not", "additionalItems", "contains", "propertyNames"}
_SCHEMA_LIST_KEYS = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SCHEMA_MAP_KEYS = {"properties", "patternProperties", "definitions", "$defs", "schemas"}
_FILE_SUFFIXES = (".json", ".yaml", ".yml")
_ROOT = "<root>"  # the root document, as a file key


def has_external_refs(node: Any) -> bool:
    # A loop over containers only: a recursive call for every string of a 47 MB spec took seconds.
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                return True
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
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
        root_file: str | None = None,
    ) -> None:
        self.document = copy.deepcopy(document)
        self.base = base  # the root file's folder, or its URL
        self.origin = origin
        self.allow_remote = allow_remote
        self.allow_private = allow_private  # remote refs may reach loopback, private and link-local addresses
        # Local refs stay inside this folder (real paths: a symlink cannot lead out of it).
        self.root = (root or (base if isinstance(base, Path) else None) or Path.cwd()).resolve()
        self.root_file = root_file  # the root document's real path or URL: refs back to it stay local
        self.swagger = "swagger" in document
        self._files: dict[str, dict[str, Any]] = {}
        self._placed: dict[tuple[str, str], str] = {}  # (file, pointer) -> local $ref
        self._taken: dict[str, set[str]] = {}
        self._inlining: set[tuple[str, str]] = set()  # copied in place right now: a cycle is placed instead
        self._copied = 0  # nodes copied in place so far (see _copy_in_place)
        self._located: dict[tuple[str, Path | str], tuple[str, Path | str]] = {}

    def bundle(self) -> dict[str, Any]:
        self._files[_ROOT] = self.document
        self._adopt_components()
        self._rewrite(self.document, _ROOT, self.base, "other")
        return self.document

    def _adopt_components(self) -> None:
        """A root component that is only an external `$ref` (`Droplet: {$ref: models/droplet.yml}`)
        takes the target's content under its own name, before anything else places that target."""
        adopted = []
        for kind in ("schema", "parameter", "response"):
            section = self._section(kind)
            container = pointer.get(self.document, "#/" + "/".join(section or ()), None)
            if section is None or not isinstance(container, dict):
                continue
            for name, entry in container.items():
                ref = entry.get("$ref") if isinstance(entry, dict) and len(entry) == 1 else None
                if not isinstance(ref, str) or ref.startswith("#"):
                    continue
                target_file, target_folder, where = self._target(ref, _ROOT, self.base)
                if target_file == _ROOT or (target_file, where) in self._placed:
                    continue  # a second root name for the same target stays a ref to the first
                self._placed[(target_file, where)] = "#/" + "/".join(pointer.escape(p) for p in (*section, name))
                adopted.append((container, name, target_file, target_folder, where, kind))
        for container, name, target_file, target_folder, where, kind in adopted:
            container[name] = copy.deepcopy(_resolve(self._load(target_file), where, target_file))
            self._rewrite(container[name], target_file, target_folder, kind)

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
        if isinstance(ref, str) and (not ref.startswith("#") or file != _ROOT):
            if self._copy_in_place(node, ref, file, folder, kind):
                return
            node["$ref"] = self._local(ref, file, folder, kind)
        for key, value in list(node.items()):  # placing a target may add sections to the root
            if key == "$ref":
                continue
            if key == "discriminator" and isinstance(value, dict) and isinstance(value.get("mapping"), dict):
                self._rewrite_mapping(value["mapping"], file, folder)
                continue
            for child, child_kind in _children(key, value):
                self._rewrite(child, file, folder, child_kind)

    def _copy_in_place(self, node: dict[str, Any], ref: str, file: str, folder: Path | str, kind: str) -> bool:
        """Replace a ref to something that is not a schema, parameter or response (a path item, an
        operation, a request body) by its target's content, rewritten in the target's own file; the
        ref's siblings stay. False when it must stay a ref: a cycle, or a target that is not an object."""
        if self._section(kind) is not None:
            return False
        target_file, target_folder, where = self._target(ref, file, folder)
        key = (target_file, where)
        if target_file == _ROOT or key in self._inlining:
            return False
        content = copy.deepcopy(_resolve(self._load(target_file), where, target_file))
        if not isinstance(content, dict):
            return False
        # Each use is a copy, so ten files of ten refs each would copy a billion nodes: bounded as
        # YAML aliases are (they are the same thing across files).
        self._copied += size(content)
        if self._copied > MAX_ALIAS_NODES:
            raise SpecError(
                f"$ref {ref!r}: references copied in place (path items, operations, extensions) add more than "
                f"{MAX_ALIAS_NODES} nodes to the document",
                source=self.origin if file == _ROOT else shown(file),
            )
        self._inlining.add(key)
        try:
            self._rewrite(content, target_file, target_folder, kind)
        finally:
            self._inlining.discard(key)
        siblings = {k: v for k, v in node.items() if k != "$ref" and k not in content}
        node.clear()
        node.update(content)
        for sibling_key, value in siblings.items():  # the ref's siblings live in the referring file
            node[sibling_key] = value
            self._rewrite(value, file, folder, "other")
        return True

    def _rewrite_mapping(self, mapping: dict[str, Any], file: str, folder: Path | str) -> None:
        """A discriminator's mapping values are refs too (`cat: models/cat.yml`), unless bare names."""
        for name, value in mapping.items():
            if not isinstance(value, str):
                continue
            target = value.partition("#")[0]
            if (value.startswith("#") and file != _ROOT) or target.lower().endswith(_FILE_SUFFIXES):
                mapping[name] = self._local(value, file, folder, "schema")

    def _target(self, ref: str, file: str, folder: Path | str) -> tuple[str, Path | str, str]:
        """(file, its folder, fragment) that `ref`, written in `file`, points at."""
        target, _, fragment = ref.partition("#")
        where = "#" + fragment
        if not target:  # a local ref inside an external file points into that file
            return file, folder, where
        located = self._located.get((target, folder))
        if located is None:  # resolving a path costs a syscall per part: once per file and folder
            located = self._located[target, folder] = self._locate(target, folder, ref)
        target_file, target_folder = located
        if target_file == self.root_file:
            return _ROOT, self.base, where
        return target_file, target_folder, where

    def _local(self, ref: str, file: str, folder: Path | str, kind: str) -> str:
        target_file, target_folder, where = self._target(ref, file, folder)
        if target_file == _ROOT:
            return where
        key = (target_file, where)
        if key in self._placed:
            return self._placed[key]
        content = copy.deepcopy(_resolve(self._load(target_file), where, target_file))
        section = self._section(kind)
        if section is None:  # not a schema, parameter or response, in a cycle: kept beside the rest
            self._placed[key] = self._store_other(key, content)  # before recursing: the cycle ends here
            self._rewrite(content, target_file, target_folder, kind)
            return self._placed[key]
        name = self._name(section, target_file, where)
        local = pointer.join("#", *section, name)
        self._placed[key] = local  # before recursing: recursive schemas end here
        self._container(section)[name] = content
        self._rewrite(content, target_file, target_folder, kind)
        return local

    # -- placing -----------------------------------------------------------------------------------

    def _section(self, kind: str) -> tuple[str, ...] | None:
        return _section(kind, self.swagger)

    def _container(self, section: tuple[str, ...]) -> dict[str, Any]:
        return _container(self.document, section)

    def _name(self, section: tuple[str, ...], file: str, where: str) -> str:
        parts = pointer.tokens(where)
        wanted = (parts[-1] if parts else "") or Path(urlsplit(file).path).stem or "External"
        taken = self._taken.setdefault("/".join(section), set(self._container(section)))
        return _free_name(wanted, taken, self._label(file) + where)

    def _store_other(self, key: tuple[str, str], content: Any) -> str:
        name = f"{Path(urlsplit(key[0]).path).stem}_{names.short_hash(self._label(key[0]) + key[1], 6)}"
        self.document.setdefault("x-typed-mcp-external", {})[name] = content
        return f"#/x-typed-mcp-external/{name}"

    def _label(self, file: str) -> str:
        """A file as names may depend on it: relative to the ref root, never where the checkout lives."""
        if file.startswith(("http://", "https://")):
            return redact_url(file)
        path = Path(file)
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else file

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
                raw = read_file(Path(file), DEFAULT_MAX_BYTES, shown(file))
                fmt = "yaml" if file.endswith((".yaml", ".yml")) else "json"
            self._files[file] = parse(raw, origin=shown(file), fmt=fmt)
        return self._files[file]


def _resolve(document: Any, ref: str, file: str) -> Any:
    try:
        return pointer.get(document, ref)
    except KeyError:
        raise SpecError("$ref points at nothing", source=shown(file), pointer=ref) from None


# -- walking and placing, for any document ------------------------------------------------------


def _children(key: str, value: Any) -> list[tuple[Any, str]]:
    """The nodes under `key` (of an object) to walk, each with what it is: a schema, a parameter,
    a response, or other."""
    if key in _SCHEMA_KEYS or key in _SCHEMA_LIST_KEYS:
        return [(value, "schema")]
    if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
        return [(sub, "schema") for sub in value.values()]
    if key == "parameters" and isinstance(value, list):
        return [(sub, "parameter") for sub in value]
    if key == "responses" and isinstance(value, dict):
        return [(sub, "response") for sub in value.values()]
    return [(value, "other")]


def _section(kind: str, swagger: bool) -> tuple[str, ...] | None:
    """Where a document keeps its named things of `kind` (None: not a kind it names)."""
    if swagger:
        return {"schema": ("definitions",), "parameter": ("parameters",), "response": ("responses",)}.get(kind)
    return {
        "schema": ("components", "schemas"),
        "parameter": ("components", "parameters"),
        "response": ("components", "responses"),
    }.get(kind)


def _container(document: dict[str, Any], section: tuple[str, ...]) -> dict[str, Any]:
    node = document
    for part in section:
        node = node.setdefault(part, {})
    return node


def _free_name(wanted: str, taken: set[str], seed: str) -> str:
    """`wanted`, or when it is taken `wanted_<hash of seed>`; recorded as taken."""
    name = wanted if wanted not in taken else f"{wanted}_{names.short_hash(seed, 6)}"
    taken.add(name)
    return name


# -- schemas borrowed from elsewhere in the document -------------------------------------------------


def hoist_borrowed(document: dict[str, Any]) -> None:
    """A schema `$ref` to a schema that is not a component (`#/paths/~1vehicles~1%7BvehicleId%7D/get/
    responses/200/content/application~1json/schema`: enode.io reuses another operation's answer so)
    makes that schema a component, in place: the schema moves under the document's schemas, named
    after where it was (`GetVehicleResponse`), a `$ref` to it is left where it was, and every ref
    to it (however its pointer is written) points to the component. Otherwise the models, generated
    from the components alone, would read it as any value. A chain of refs that ends at a component
    is shortened to a ref to that component; a ref that points at nothing is left as it is."""
    section = _section("schema", "swagger" in document)
    assert section is not None
    found: list[dict[str, Any]] = []
    _schema_refs(document, "other", found)
    borrowed: list[tuple[dict[str, Any], str | tuple[str, ...]]] = []
    for node in found:
        end = _chain_end(document, node["$ref"], section)
        if end is not None:
            borrowed.append((node, end))
    if not borrowed:
        return
    targets = list(dict.fromkeys(end for _, end in borrowed if isinstance(end, tuple)))
    taken = set(_container(document, section))
    refs = {
        where: pointer.join("#", *section, name)
        for where in targets
        for name in [_free_name(_borrowed_name(document, where), taken, "/".join(where))]
    }
    names_of = {where: pointer.tokens(ref)[-1] for where, ref in refs.items()}
    # The deepest first: a target inside another moves with a ref left in its place, and the
    # outer one's pointer still holds. Placed in the order they were first referred to.
    moved: dict[tuple[str, ...], Any] = {}
    for where in sorted(targets, key=len, reverse=True):
        parent = pointer.get(document, pointer.join("#", *where[:-1]))
        slot: Any = int(where[-1]) if isinstance(parent, list) else where[-1]
        moved[where], parent[slot] = parent[slot], {"$ref": refs[where]}
    container = _container(document, section)
    for where in targets:
        container[names_of[where]] = moved[where]
    for node, end in borrowed:
        node["$ref"] = refs[end] if isinstance(end, tuple) else end


def _schema_refs(node: Any, kind: str, found: list[dict[str, Any]]) -> None:
    """Every local `$ref` in a schema's place under `node`, in document order."""
    if isinstance(node, list):
        for item in node:
            _schema_refs(item, kind, found)
        return
    if not isinstance(node, dict):
        return
    if kind == "schema" and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        found.append(node)
    for key, value in node.items():
        if key not in ("$ref", "discriminator", "enum", "const", "default", "example", "examples"):
            for child, child_kind in _children(key, value):
                _schema_refs(child, child_kind, found)


def _chain_end(document: dict[str, Any], ref: str, section: tuple[str, ...]) -> str | tuple[str, ...] | None:
    """Where a schema ref that does not point at a component leads: the pointer (as tokens) of the
    schema to make a component, or the ref to the component the chain ends at. None: `ref` points
    under the schemas already, or at nothing (or only at refs)."""
    seen: set[tuple[str, ...]] = set()
    first = True
    while True:
        where = tuple(pointer.tokens(ref))
        if where[: len(section)] == section and len(where) > len(section):
            return None if first else ref
        if where in seen or not where:
            return None
        seen.add(where)
        target = pointer.get(document, ref, None)
        if isinstance(target, dict) and set(target) == {"$ref"} and isinstance(target["$ref"], str):
            if not target["$ref"].startswith("#/"):
                return None
            ref, first = target["$ref"], False
            continue
        return where if isinstance(target, (dict, bool)) else None


def _borrowed_name(document: dict[str, Any], where: tuple[str, ...]) -> str:
    """A readable name for the schema at `where`: the operation (its operationId, or its method and
    path) or the component it belongs to, then what it is there (`GetVehicleResponse`,
    `ListChargersLimit`, `UpdateUserBody`, `GetVehicleResponseBattery`)."""
    words: list[str] = []
    rest = list(where)
    if rest[:1] == ["paths"] and len(rest) >= 2:
        path, rest = rest[1], rest[2:]
        if rest and rest[0] != "parameters":
            operation = pointer.get(document, pointer.join("#", *where[:3]), None)
            op_id = operation.get("operationId") if isinstance(operation, dict) else None
            words.append(op_id if isinstance(op_id, str) and op_id.strip() else f"{rest[0]} {path}")
            rest = rest[1:]
        else:
            words.append(path)
    elif rest[:1] == ["components"] and len(rest) >= 3:
        words.append(rest[2])
        rest = rest[3:]
    i = 0
    while i < len(rest):
        token, following = rest[i], rest[i + 1] if i + 1 < len(rest) else ""
        if token == "responses":
            words.append("response" if following.startswith("2") or following == "default" else f"{following} response")
            i += 2
        elif token == "parameters":
            parameter = pointer.get(document, pointer.join("#", *where[: len(where) - len(rest) + i + 2]), None)
            name = parameter.get("name") if isinstance(parameter, dict) else None
            words.append(name if isinstance(name, str) else f"parameter {following}")
            i += 2
        elif token in ("content", "properties", "patternProperties", "allOf", "anyOf", "oneOf", "prefixItems"):
            if token != "content":
                words.append(following if token == "properties" else f"{token} {following}")
            i += 2
        else:
            words.append({"requestBody": "body", "items": "item", "schema": ""}.get(token, token))
            i += 1
    return names.pascal_case(" ".join(words))
