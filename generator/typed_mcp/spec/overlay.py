"""OpenAPI Overlay 1.0 documents applied to the loaded document, before anything else reads it.

An overlay is the OAI's standard way to patch a spec one does not own: `overlay: 1.0.x`, `info`
(title, version) and `actions`, each a `target` (an RFC 9535 JSONPath, evaluated by the
python-jsonpath library) with an `update` (merged into every node it selects) or `remove: true`
(every selected node is removed from its parent). Actions run in order, each on the result of
the one before; overlays given several times run in the order given.

Stricter than the Overlay specification in one way: a target that selects nothing is an error
naming the overlay and the action, because after the live spec changed such an action would
otherwise silently stop applying, and the curation with it.

Bounded: RFC 9535's `match()` and `search()` take an I-Regexp (RFC 9485), which python-jsonpath hands
to Python's backtracking `re` (`search(@.description, '(a+)+$')` hung `generate`); here they run in
pydantic-core's Rust engine, linear in the text, and a pattern it cannot read, or past the size
`patterns.MAX_SIZE` allows, is an error naming the action. An action selects at most MAX_SELECTED
nodes, its update copies at most MAX_ALIAS_NODES nodes into the document in all, and its target is
evaluated within SECONDS.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import jsonpath
from jsonpath.function_extensions import ExpressionType, FilterFunction
from pydantic_core import SchemaError, SchemaValidator, core_schema

from typed_mcp.errors import SpecError
from typed_mcp.spec.load import DEFAULT_MAX_BYTES, MAX_ALIAS_NODES, LoadedSpec, parse, read_file, size
from typed_mcp.spec.normalize import HTTP_METHODS
from typed_mcp.spec.patterns import MAX_SIZE, linear_size

_VERSION = re.compile(r"^1\.0\.\d+$")
MAX_SELECTED = 1_000_000  # nodes one action may select (`$..*` selects 260,000 of GitHub's spec)
# Seconds one action's target may take to evaluate: python-jsonpath's descendant segment over all of
# GitHub's spec took up to 66 s on two loaded cores (`$..[?search(@.description, 'repo')]`).
SECONDS = 180.0


class _RefusedPattern(Exception):
    """A `match()` or `search()` pattern the linear engine cannot run; the message says which and why."""


class _IRegexp(FilterFunction):
    """RFC 9535's `match()` (`anchored`: the whole value) or `search()` (anywhere in it), the I-Regexp
    written as Rust's engine reads it (`iregexp`) and run there."""

    arg_types = [ExpressionType.VALUE, ExpressionType.VALUE]
    return_type = ExpressionType.LOGICAL

    def __init__(self, anchored: bool) -> None:
        self.anchored = anchored
        self.engines: dict[str, SchemaValidator] = {}

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(pattern, str):
            return False
        engine = self.engines.get(pattern)
        if engine is None:  # before the value is looked at: a bad pattern is an error on any node
            engine = self.engines[pattern] = _engine(pattern, self.anchored)
        return isinstance(value, str) and engine.isinstance_python(value)


def _engine(pattern: str, anchored: bool) -> SchemaValidator:
    try:
        translated = iregexp(pattern)
        if linear_size(translated) > MAX_SIZE:
            raise ValueError(f"more than {MAX_SIZE} characters once its repetitions are written out")
        if anchored:
            translated = f"^(?:{translated})$"
        return SchemaValidator(core_schema.str_schema(pattern=translated, regex_engine="rust-regex"))
    except ValueError as exc:
        raise _RefusedPattern(f"pattern {pattern!r}: {exc}") from None
    except SchemaError:
        raise _RefusedPattern(f"pattern {pattern!r}: not an I-Regexp the linear engine reads") from None


# I-Regexp's escapes of one character (RFC 9485 section 5.3); `\p{...}` and `\P{...}` are read apart.
_SINGLE_ESCAPES = set("()*+-.?[\\]^{|}nrt")


def iregexp(pattern: str) -> str:
    """An I-Regexp (RFC 9485) as Rust's engine means it: `.` is any character but CR and LF, `^` and `$`
    are plain characters, groups capture nothing; a ValueError naming what is no I-Regexp."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped in ("p", "P") and pattern.startswith("{", i + 2) and "}" in pattern[i:]:
                end = pattern.index("}", i) + 1
            elif escaped and escaped in _SINGLE_ESCAPES:
                end = i + 2
            else:
                raise ValueError(f"\\{escaped} is no I-Regexp escape")
            out.append(pattern[i:end])
            i = end
            continue
        if in_class:
            if char == "[":
                raise ValueError("'[' inside a class is no I-Regexp")
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
        elif char == ".":
            out.append("[^\\n\\r]")
        elif char in "^$":
            out.append("\\" + char)
        elif char == "(" and pattern.startswith("?", i + 1):
            raise ValueError("'(?' is no I-Regexp")
        else:
            out.append(char)
        i += 1
    return "".join(out)


class _Environment(jsonpath.JSONPathEnvironment):
    """RFC 9535 JSONPath without the library's extensions, its regex functions run in linear time."""

    def setup_function_extensions(self) -> None:
        super().setup_function_extensions()
        self.function_extensions["match"] = _IRegexp(anchored=True)
        self.function_extensions["search"] = _IRegexp(anchored=False)


_ENV = _Environment(strict=True)


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
    raw = read_file(path, DEFAULT_MAX_BYTES, where)
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
    matches = []
    try:
        with _deadline(SECONDS):
            for match in _ENV.finditer(target, document):
                matches.append(match)
                if len(matches) > MAX_SELECTED:
                    raise SpecError(f"target {target!r} selects more than {MAX_SELECTED} nodes", source=where)
    except _Overtime:
        raise SpecError(f"target {target!r} took more than {SECONDS:g} s to evaluate", source=where) from None
    except _RefusedPattern as exc:
        raise SpecError(f"target {target!r}: {exc}", source=where) from None
    except jsonpath.JSONPathError as exc:  # nesting past the library's recursion limit, a type error
        raise SpecError(f"target {target!r}: {_one_line(exc)}", source=where) from None
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
    if len(matches) * size(update) > MAX_ALIAS_NODES:  # each selected node gets a copy
        raise SpecError(
            f"target {target!r} selects {len(matches)} nodes: its update would add more than {MAX_ALIAS_NODES} "
            "nodes to the document",
            source=where,
        )
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


class _Overtime(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """`_Overtime` raised in the block once `seconds` have passed. JSONPath's descendant segments
    chained (`$..*..*..*`, or one inside a filter) multiply the nodes visited by the depth or the size
    of the document, and python-jsonpath offers no hook that counts them, so the evaluation, plain
    Python, is stopped by a timer (SIGALRM: on the main thread, where the CLI runs it)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise _Overtime

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
