"""A spec whose every string and shape is as large as a parser lets it be generates in bounded time:
the whole pipeline (the CLI, in a process of its own), not one function, so a stage that is quadratic
in some string is found whichever stage it is. Each shape below stalled generation for minutes once
(`tests/security/test_patterns.py` has the regexes; these are the loops and the combinations)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

DEADLINE = 120  # seconds: the shapes took 28 s to over five minutes each on the old code; now about 5 s
BIG = 100_000


def hostile_spec() -> dict:
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}

    def deep(prefix: str) -> str:
        return "/" + "/".join(f"{prefix}{i}/{{p{i}}}" for i in range(300))

    paths: dict = {
        # An operationId of capitals (snake_case's acronym rule), and one of words run together that its
        # summary spells (the spelling of run-together names).
        "/a": {"get": {"operationId": "A" * BIG, "summary": "Get all", "responses": ok}},
        "/b": {"get": {"operationId": "get" + "ab" * (BIG // 2), "summary": "get ab ab", "responses": ok}},
        # Brackets that open no Markdown link; one long word before a "(" (the abbreviations).
        "/c": {"get": {"operationId": "c", "summary": "[" * 32_000, "responses": ok}},
        "/d": {"get": {"operationId": "d", "summary": "a" * 32_000 + " (SSO)", "responses": ok}},
        # Long titles of many words beside paths of many words (the API's clippings).
        "/" + "/".join(f"seg{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(500)): {
            "get": {"operationId": "e", "summary": " ".join(f"word{i}" for i in range(5000)), "responses": ok}
        },
    }
    # Operations sharing an operationId on paths of 300 scopes (the names that tell them apart).
    for k in range(3):
        path = deep(f"r{k}x")
        parameters = [
            {"name": f"p{i}", "in": "path", "required": True, "schema": {"type": "string"}} for i in range(300)
        ]
        paths[path] = {"get": {"operationId": "list_runs", "parameters": parameters, "responses": ok}}
    return {"openapi": "3.0.3", "info": {"title": "Hostile", "version": "1"}, "paths": paths}


@pytest.mark.slow  # the CLI, in a process of its own
def test_a_spec_of_hostile_shapes_generates_in_bounded_time(tmp_path: Path):
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(hostile_spec()))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "typed_mcp", "generate", str(source), "--out", str(out), "-q", "--no-cache"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE, check=False)
    took = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert took < DEADLINE
    tools = json.loads((out / "typed-mcp.json").read_text())["tools"]
    assert len(tools) == 8 and all(len(name) <= 64 for name in tools)
