"""JSON pointers (RFC 6901) as used in `$ref` fragments: `#/components/schemas/Pet`."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

_MISSING = object()


def tokens(pointer: str) -> list[str]:
    """`#/a~1b/c` -> ["a/b", "c"]; `#` and `#/` -> []."""
    if pointer in ("#", "#/", ""):
        return []
    return [unquote(t).replace("~1", "/").replace("~0", "~") for t in pointer.lstrip("#").split("/")[1:]]


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def join(base: str, *keys: Any) -> str:
    """`base` followed by `keys`, each escaped: `join("#/paths", "/pets/{id}", "get")` is
    `#/paths/~1pets~1{id}/get`, and `join("#", *tokens(ref))` is `ref` again."""
    return base + "".join("/" + escape(str(key)) for key in keys)


def get(document: Any, pointer: str, default: Any = _MISSING) -> Any:
    """The node at `pointer`, or `default` (KeyError when no default) if it points at nothing."""
    node = document
    for token in tokens(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif default is not _MISSING:
            return default
        else:
            raise KeyError(pointer)
    return node
