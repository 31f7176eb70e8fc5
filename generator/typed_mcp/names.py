"""Names derived from untrusted spec text: always `[a-z0-9_]` identifiers, stable, unique.

Uniqueness never depends on the order operations appear in: every member of a colliding group
gets a suffix hashed from its own `METHOD /path`, which does not change when the spec is reordered.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

MAX_TOOL_NAME = 64
_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")

# Names a generated module may not define at top level or take as a parameter.
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
# A parameter may shadow a builtin (the function body does not use them), but not a keyword, nor
# `api`, which the body calls; `model_*` clashes with pydantic's namespace in the SDK's argument model.
_ARGUMENT_RESERVED = set(keyword.kwlist) | {"api"}


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def snake_case(text: str) -> str:
    """`repos/get` -> `repos_get`, `getUserByID` -> `get_user_by_id`, `List Pets!` -> `list_pets`."""
    text = _CAMEL_2.sub(r"\1_\2", text)
    text = _CAMEL_1.sub(r"\1_\2", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _NON_WORD.sub("_", text).strip("_")


def pascal_case(text: str) -> str:
    words = snake_case(text).split("_")
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    if not name or not name[0].isalpha():
        name = "Model" + name
    return name


def _fit(name: str, limit: int, key: str) -> str:
    """Truncate deterministically: a prefix plus a hash of the full key, so two long names stay apart."""
    if len(name) <= limit:
        return name
    suffix = short_hash(key)
    return name[: limit - len(suffix) - 1].rstrip("_") + "_" + suffix


def base_tool_name(operation_id: str | None, method: str, path: str) -> str:
    name = snake_case(operation_id or "") or snake_case(f"{method} {path}")
    if not name:
        name = method.lower()
    if not name[0].isalpha():
        name = "op_" + name
    return name


def unique_tool_names(items: Iterable[tuple[str, str]], limit: int = MAX_TOOL_NAME) -> dict[str, str]:
    """Map each key (`METHOD /path`) to a unique tool name, given (key, base name) pairs."""
    pairs = list(items)
    fitted = {key: _fit(base, limit, key) for key, base in pairs}
    groups: dict[str, list[str]] = defaultdict(list)
    for key, name in fitted.items():
        groups[name].append(key)
    result: dict[str, str] = {}
    for name, keys in groups.items():
        if len(keys) == 1:
            result[keys[0]] = name
            continue
        for key in keys:
            suffix = short_hash(key)
            result[key] = name[: limit - len(suffix) - 1].rstrip("_") + "_" + suffix
    return result


def python_name(name: str) -> str:
    """A tool name as a module-level function name: builtins and keywords get a trailing `_`."""
    return name + "_" if name in _RESERVED else name


def argument_name(wire_name: str) -> str:
    """A parameter's Python (and MCP argument) name."""
    name = snake_case(wire_name) or "param"
    if name[0].isdigit():
        name = "p_" + name
    if name in _ARGUMENT_RESERVED or name.startswith("model_"):
        name += "_"
    return name


def unique_argument_names(candidates: list[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """(wire name, location, preferred name) -> unique argument names.

    Two arguments wanting the same name both take their location as a suffix
    (`id_path`, `id_query`); a collision that survives that gets a hash suffix.
    """
    wanted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for wire, location, preferred in candidates:
        wanted[preferred].append((wire, location))
    result: dict[tuple[str, str], str] = {}
    taken: set[str] = {name for name, owners in wanted.items() if len(owners) == 1}
    for preferred, owners in wanted.items():
        if len(owners) == 1:
            result[owners[0]] = preferred
            continue
        by_location = [(wire, location, f"{preferred.rstrip('_')}_{location}") for wire, location in owners]
        counts = defaultdict(int)
        for _, _, name in by_location:
            counts[name] += 1
        for wire, location, name in by_location:
            if counts[name] > 1 or name in taken:
                name = f"{name}_{short_hash(wire + ' ' + location, 6)}"
            taken.add(name)
            result[(wire, location)] = name
    return result
