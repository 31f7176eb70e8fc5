"""The calls of a strict run, again through the other strict clients and transports.

`strict_run` sorts the outcomes of one reference pass (the 1.x TypeScript client over stdio). Each
pass here (a `StrictClient`: SDK line and protocol revision, over stdio or streamable HTTP) lists the
tools, compiles every schema with its own AJV and makes the same calls; what it must show is nothing
new: no refusal (-32602/-32600, or an exception), no schema its AJV cannot compile, the same tools,
and for each call the reference's outcome (error result or not: Prism's static answers are the same
every time).
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

from harness.demo.process import free_port, stop, wait_http
from harness.node_tools import STRICT_CLIENTS, TS1, StrictClient, run_ts_client

TRANSPORTS = ("stdio", "http")
Pass = tuple[StrictClient, str]
REFERENCE: Pass = (TS1, "stdio")
EVERY_PASS: tuple[Pass, ...] = tuple((client, transport) for client in STRICT_CLIENTS for transport in TRANSPORTS)


def pass_id(strict_pass: Pass) -> str:
    client, transport = strict_pass
    return f"{client.id}-{transport}"


def parse_passes(text: str) -> tuple[Pass, ...]:
    """`ts1-http,ts2-2026-07-28-stdio` (or `all`) -> passes; an unknown one is a ValueError naming the valid ones."""
    known = {pass_id(p): p for p in EVERY_PASS}
    if text.strip() == "all":
        return EVERY_PASS
    wanted = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"unknown strict client pass {', '.join(unknown)}: choose from {', '.join(known)} or all")
    return tuple(known[name] for name in wanted)


@contextlib.contextmanager
def over(transport: str, command: list[str], env: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The server `command` over `transport`; yields run_ts_client's way to reach it. Over HTTP its
    log goes to a file: a pipe nobody reads would stall it after some thousand requests."""
    if transport == "stdio":
        yield {"server_cmd": command}
        return
    import os

    port = free_port()
    args = [*command, "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=log, stderr=log)
        try:
            wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=120)
            yield {"server_cmd": None, "url": f"http://127.0.0.1:{port}/mcp"}
        finally:
            stop(proc)


def other_passes(
    command: list[str],
    env: dict[str, str],
    calls: list[dict[str, Any]],
    reference: dict[str, Any],
    passes: tuple[Pass, ...],
    *,
    timeout: float,
) -> dict[str, Any]:
    """Each pass (but the reference) listed, compiled and called: what differs from `reference` (the
    reference pass's run_ts_client output). Keys: passes (ids); refused, schema_failures,
    listed_differs, disagrees (lists of tuples starting with the pass's id)."""
    outcome: dict[str, Any] = {
        "passes": [],
        "refused": [],
        "schema_failures": [],
        "listed_differs": [],
        "disagrees": [],
    }
    expected = {r["name"]: r["isError"] for r in reference["results"] if r["ok"]}
    for strict_pass in passes:
        if strict_pass == REFERENCE:
            continue
        client, transport = strict_pass
        name = pass_id(strict_pass)
        outcome["passes"].append(name)
        with over(transport, command, env) as target:
            run = run_ts_client(env=env, calls=calls, compile_schemas=True, timeout=timeout, client=client, **target)
        outcome["schema_failures"] += [(name, f["name"], f["which"], f["error"]) for f in run["schemas"]["failures"]]
        if run["tools"] != reference["tools"]:
            outcome["listed_differs"].append((name, run["tools"], reference["tools"]))
        for result in run["results"]:
            if not result["ok"]:
                outcome["refused"].append((name, result["name"], result["errorCode"], (result["error"] or "")[:300]))
            elif result["name"] in expected and expected[result["name"]] is not result["isError"]:
                outcome["disagrees"].append((name, result["name"]))
    return outcome
