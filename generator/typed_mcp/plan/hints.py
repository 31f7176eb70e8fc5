"""A tool's annotations (MCP's behaviour hints: readOnlyHint, destructiveHint, idempotentHint,
openWorldHint), from what the operation does: its HTTP method, and its name and summary where the
method says little (an API of POSTs only, dstack's, lists and deletes with POST). Clients ask for
confirmation on what is destructive and `--read-only` serves what is read-only, so where the two
readings disagree the cautious one wins: a name that says delete is destructive whatever the method,
and a POST is read-only only when its name reads and nothing in its name or summary writes.

Every hint comes with its reason (`Hints.why`), recorded in `typed-mcp.json`; curation
(`x-mcp: {annotations}`, `[operations.X] annotations`) overrides any of them afterwards.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from typed_mcp import names
from typed_mcp.plan.ir import Hints
from typed_mcp.runtime.contracts import IDEMPOTENT_METHODS

READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD = "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"

# What the method alone says (RFC 9110: GET, HEAD, OPTIONS and TRACE are safe). PUT replaces what it
# names and PATCH changes it in place: MCP's destructiveHint false means "only additive updates", which
# neither is. Whether it is idempotent is the runtime's list of the methods it retries.
_BY_METHOD: dict[str, tuple[bool, bool, str]] = {  # read-only, destructive, why
    "GET": (True, False, "GET reads"),
    "HEAD": (True, False, "HEAD reads"),
    "OPTIONS": (True, False, "OPTIONS reads"),
    "TRACE": (True, False, "TRACE reads"),
    "PUT": (False, True, "PUT replaces what it names"),
    "PATCH": (False, True, "PATCH changes what it names in place"),
    "DELETE": (False, True, "DELETE removes what it names"),
    "POST": (False, False, "POST, and nothing in its name or summary says it only reads or destroys"),
}


def _words(text: str) -> list[str]:
    """Words as verbs are looked up: `Deletes` and `deletes` as delete."""
    return [names.singular(w) for w in names.snake_case(text).split("_") if w]


def _verb(words: list[str], verbs: frozenset[str]) -> str | None:
    return next((w for w in words if w in verbs), None)


def infer(method: str, path: str, operation_id: str | None, summary: str | None) -> Hints:
    """The hints of one operation, each with its reason. Its name is its operationId without a route it
    repeats (FastAPI's `list_runs_api_runs_list_post` is `list_runs`), else its path (`/runs/delete`)."""
    read_only, destructive, by_method = _BY_METHOD.get(method.upper(), _BY_METHOD["POST"])
    idempotent = method.upper() in IDEMPOTENT_METHODS
    why = {READ_ONLY: by_method, DESTRUCTIVE: by_method, IDEMPOTENT: by_method}
    name = names.base_tool_name(operation_id, method.lower(), path) if operation_id else path
    sources = [
        (f"its name {names.snake_case(name)}", _words(name)),
        (f"its summary {summary!r}", _words(summary or "")),
    ]
    verb = next(((source, v) for source, words in sources if (v := _verb(words, names.DESTRUCTIVE_VERBS))), None)
    if verb and not destructive:
        read_only, destructive = False, True
        why[READ_ONLY] = why[DESTRUCTIVE] = f"{verb[0]} says {verb[1]}"
    writes = any(_verb(words, names.WRITE_VERBS) for _, words in sources)
    reads = next(((source, v) for source, words in sources if (v := _verb(words, names.READ_VERBS))), None)
    if method.upper() == "POST" and reads and not writes:  # `get_or_create_run` reads and writes: it writes
        read_only, idempotent = True, True
        why[READ_ONLY] = why[IDEMPOTENT] = f"a POST, and {reads[0]} says {reads[1]} (and nothing there writes)"
    return Hints(
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=True,
        why=(
            (READ_ONLY, why[READ_ONLY]),
            (DESTRUCTIVE, why[DESTRUCTIVE]),
            (IDEMPOTENT, why[IDEMPOTENT]),
            (OPEN_WORLD, "it calls an API over the network"),
        ),
    )


_FIELDS = {READ_ONLY: "read_only", DESTRUCTIVE: "destructive", IDEMPOTENT: "idempotent", OPEN_WORLD: "open_world"}


def overridden(hints: Hints, given: dict[str, bool | str], rule: str) -> Hints:
    """`hints` with the values curation `given` (MCP's names: readOnlyHint, ..., title), each said to
    come from `rule`."""
    changes: dict[str, Any] = {_FIELDS.get(hint, hint): value for hint, value in given.items()}
    why = dict(hints.why)
    why.update(dict.fromkeys(given, rule))
    return replace(hints, **changes, why=tuple(why.items()))


def record(hints: Hints) -> str:
    """A tool's hints and the reason for each, one line for typed-mcp.json (the values alone are in
    catalog.json): `readOnlyHint true, destructiveHint false, idempotentHint true: GET reads; ...`."""
    reasons: dict[str, list[str]] = {}
    for hint, reason in hints.why:
        reasons.setdefault(reason, []).append(f"{hint} {json.dumps(getattr(hints, _FIELDS.get(hint, hint)))}")
    return "; ".join(f"{', '.join(said)}: {reason}" for reason, said in reasons.items())
