"""What every part of the plan uses to read an operation: the one exception that skips it with a
reason (`Unsupported`), and spec text taken only when it says something (`nonblank`)."""

from __future__ import annotations

from typing import Any


class Unsupported(Exception):
    """This operation cannot be generated; the message is the reason shown in the report."""


def nonblank(value: Any) -> str | None:
    """Spec text, stripped; None when it is missing, not a string or blank."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def mapping(value: Any) -> dict[str, Any]:
    """A spec object read where one is expected: `value` when it is one, else an empty one."""
    return value if isinstance(value, dict) else {}
