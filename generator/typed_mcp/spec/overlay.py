"""OpenAPI Overlay 1.0 documents applied to the loaded document, before anything else reads it.

An overlay is the OAI's standard way to patch a spec one does not own: `overlay: 1.0.x`, `info`
(title, version) and `actions`, each a `target` (an RFC 9535 JSONPath, evaluated by the
python-jsonpath library) with an `update` (merged into every node it selects) or `remove: true`
(every selected node is removed from its parent). Actions run in order, each on the result of
the one before; overlays given several times run in the order given.

Stricter than the Overlay specification in one way: a target that selects nothing is an error
naming the overlay and the action, because after the live spec changed such an action would
otherwise silently stop applying, and the curation with it.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import jsonpath

from typed_mcp.errors import SpecError
from typed_mcp.spec.load import LoadedSpec, parse
from typed_mcp.spec.normalize import HTTP_METHODS

_VERSION = re.compile(r"^1\.0\.\d+$")
_ENV = jsonpath.JSONPathEnvironment(strict=True)  # RFC 9535 JSONPath, without the library's extensions


@dataclass(frozen=True)
class Overlay:
    path: Path
    sha256: str
    title: str
    actions: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Removed:
    """An operation an overlay action removed (for the manifest's curation list)."""

    operation: str  # "GET /x"
    rule: str  # "overlay fix.yaml actions[2]"


def read_overlay(path: Path) -> Overlay:
    """Parse and check one overlay document: a one-line error naming the file when it is malformed."""
    where = str(path)
    if not path.is_file():
        raise SpecError("no such overlay file", source=where)
    raw = path.read_bytes()
    data = parse(raw, origin=where, fmt="json" if path.suffix.lower() == ".json" else "yaml", kind="Overlay")
    version = data.get("overlay")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise SpecError(f"not an Overlay 1.0 document ('overlay' is {version!r}, expected 1.0.x)", source=where)
    info = data.get("info")
    if not isinstance(info, dict) or not isinstance(info.get("title"), str) or not isinstance(info.get("version"), str):
        raise SpecError("'info' must be an object with a title and a version", source=where, pointer="#/info")
    actions = data.get("actions")
    if not isinstance(actions, list) or not actions:
        raise SpecError("'actions' must be a non-empty list", source=where, pointer="#/actions")
    for index, action in enumerate(actions):
        pointer = f"#/actions/{index}"
        if not isinstance(action, dict):
            raise SpecError("an action must be an object", source=where, pointer=pointer)
        unknown = sorted(k for k in action if k not in ("target", "description", "update", "remove"))
        unknown = [k for k in unknown if not k.startswith("x-")]
        if unknown:
            raise SpecError(f"unknown action field {unknown[0]!r}", source=where, pointer=pointer)
        target = action.get("target")
        if not isinstance(target, str) or not target.startswith("$"):
            raise SpecError("'target' must be a JSONPath starting with '$'", source=where, pointer=pointer)
        try:
            _ENV.compile(target)
        except jsonpath.JSONPathError as exc:
            raise SpecError(f"invalid JSONPath {target!r}: {_one_line(exc)}", source=where, pointer=pointer) from None
        if "remove" in action and not isinstance(action["remove"], bool):
            raise SpecError("'remove' must be true or false", source=where, pointer=pointer)
        if action.get("remove") is not True and "update" not in action:
            raise SpecError("an action needs 'update' or 'remove: true'", source=where, pointer=pointer)
    return Overlay(path, hashlib.sha256(raw).hexdigest(), info["title"], tuple(actions))


def apply_overlays(spec: LoadedSpec, paths: tuple[Path, ...]) -> tuple[LoadedSpec, list[Overlay], list[Removed]]:
    """The spec with every overlay applied in order (the raw bytes, the snapshot, stay as
    published), the overlays read, and the operations their actions removed."""
    if not paths:
        return spec, [], []
    overlays = [read_overlay(path) for path in paths]
    document = copy.deepcopy(spec.document)
    removed: list[Removed] = []
    for overlay in overlays:
        for index, action in enumerate(overlay.actions):
            before = _operation_keys(document)
            document = _apply(document, action, f"{overlay.path}: actions[{index}]")
            after = set(_operation_keys(document))
            rule = f"overlay {overlay.path.name} actions[{index}]"
            removed += [Removed(key, rule) for key in before if key not in after]
    if not isinstance(document, dict):
        raise SpecError("the overlays leave no document object", source=str(overlays[-1].path))
    return replace(spec, document=document), overlays, removed


def _apply(document: Any, action: dict[str, Any], where: str) -> Any:
    target = action["target"]
    matches = list(_ENV.finditer(target, document))
    if not matches:
        raise SpecError(f"target {target!r} selects nothing in the spec", source=where)
    if action.get("remove") is True:
        # Remove from the deepest and last node first, so an array's later indexes stay valid.
        for match in sorted(matches, key=lambda m: tuple(_sortable(p) for p in m.parts), reverse=True):
            if not match.parts:
                raise SpecError("'remove' cannot target the document root '$'", source=where)
            parent = _node(document, match.parts[:-1])
            key = match.parts[-1]
            if isinstance(parent, dict):
                parent.pop(key, None)
            elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
                del parent[key]
        return document
    update = action["update"]
    for match in matches:
        node = match.obj
        if isinstance(node, dict):
            if not isinstance(update, dict):
                raise SpecError(f"target {target!r} selects an object: 'update' must be an object", source=where)
            _merge(node, update)
        elif isinstance(node, list):
            node.extend(copy.deepcopy(update) if isinstance(update, list) else [copy.deepcopy(update)])
        else:
            raise SpecError(
                f"target {target!r} selects a {type(node).__name__}: Overlay targets must be objects or arrays",
                source=where,
            )
    return document


def _merge(node: dict[str, Any], update: dict[str, Any]) -> None:
    """Overlay 1.0's merge: objects merge recursively; any other value replaces what was there."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(node.get(key), dict):
            _merge(node[key], value)
        else:
            node[key] = copy.deepcopy(value)


def _node(document: Any, parts: tuple[Any, ...]) -> Any:
    for part in parts:
        document = document[part]
    return document


def _sortable(part: Any) -> tuple[int, Any]:
    return (0, part) if isinstance(part, int) else (1, str(part))


def _operation_keys(document: Any) -> list[str]:
    paths = document.get("paths") if isinstance(document, dict) else None
    if not isinstance(paths, dict):
        return []
    return [
        f"{method.upper()} {path}"
        for path, item in paths.items()
        if isinstance(item, dict)
        for method in HTTP_METHODS
        if isinstance(item.get(method), dict)
    ]


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
