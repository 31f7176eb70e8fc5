"""The class names of the models: readable and unique names for schema keys, none of them a name the
generated modules import (a keyword, a builtin, a typing or runtime name), and the code generator's own
classes renamed when it named one so."""

from __future__ import annotations

import ast
import builtins
import keyword

from typed_mcp import guard, names
from typed_mcp.models import parts as model_parts

# Names a class may not take: keywords (`None`), builtins, and every name a generated module may import
# (the guard's lists: typing, pydantic, the runtime's, the MCP types, the tool module's): a schema named
# `Any`, `OpenModel` or `DataResult` would shadow it. Derived from those lists, not written by hand, so a
# name the generated code starts to import is reserved at once. (A few more stay reserved, as before.)
RESERVED_CLASS_NAMES = (
    set(keyword.kwlist)
    | set(dir(builtins))
    | guard.IMPORTED_NAMES
    | {"List", "Dict", "Set", "Tuple", "Type", "TypeAlias", "BaseModel", "JsonValue", "IntEnum", "StrEnum"}
    | {"TypeAdapter"}
)


def class_names_of(keys: list[str]) -> dict[str, str]:
    """Readable, unique class names for schema keys (a reserved one takes a `Model` suffix); a clash
    gets a suffix hashed from the key."""
    wanted = {key: _unreserved(names.pascal_case(key)) for key in keys}
    counts: dict[str, int] = {}
    for name in wanted.values():
        counts[name] = counts.get(name, 0) + 1
    return {
        key: name if counts[name] == 1 else f"{name}{names.short_hash(key, 6).upper()}" for key, name in wanted.items()
    }


def _unreserved(name: str) -> str:
    return f"{name}Model" if name in RESERVED_CLASS_NAMES else name


def unshadowed(source: str, tree: ast.Module) -> tuple[str, ast.Module]:
    """The models with every class the code generator named like a name generated modules import
    (an inline model: `Json.value` is `JsonValue`) renamed (`JsonValueModel`), as schemas' classes
    are (class_names_of), and its tree."""
    defined = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    renames: dict[str, str] = {}
    for name in sorted(defined & RESERVED_CLASS_NAMES):
        new = f"{name}Model"
        while new in defined or new in RESERVED_CLASS_NAMES or new in renames.values():
            new += "_"
        renames[name] = new
    if not renames:
        return source, tree
    source = model_parts.renamed(source, renames)
    return source, guard.check_models(source)
