"""Date-times without a timezone (issue 31 item 1), against a real FastAPI app that sends them
(`tests/harness/naive/tasks_api.py`, on 127.0.0.1): by default such an answer is an error naming the
class of problem and the one-line fix; the config's `naive_datetimes = "accept"`, globally or for one
operation, publishes each answer's `format: date-time` as a pattern admitting both kinds, which the
server checks too, so the calls succeed through the MCP Python SDK client and both TypeScript SDK
lines (AJV with formats), and the other operations keep their schemas."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client

import harness
from harness.demo.process import free_port, running
from harness.node_tools import TS1, TS2, run_ts_client
from support import generate, package_stdio, run_cli

MODULE = "tasks_mcp"
ONE = "GET /tasks/{task_id}"
CONFIGS = {
    "default": "",
    "all": 'naive_datetimes = "accept"\n',
    "one": f'[operations."{ONE}"]\nnaive_datetimes = "accept"\n',
}
NAIVE_CREATED = "2026-12-01T09:31:00"  # the app's first task, as it sends it
AWARE_DUE = "2026-12-09T17:00:00Z"


@pytest.fixture(scope="module")
def tasks_api() -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "harness.naive.tasks_api", "--port", str(port)]
    with running(args, f"{base}/openapi.json", harness.environment(), timeout=60):
        httpx.post(f"{base}/tasks", json={"title": "first"}).raise_for_status()
        yield base


class _Packages(dict):
    """The package of each config, generated on first use (a config the generator refuses fails only
    the tests that use it)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, name: str) -> Path:
        extra: list[str] = []
        if CONFIGS[name]:
            (self.root / f"{name}.toml").write_text(CONFIGS[name])
            extra = ["--config", str(self.root / f"{name}.toml")]
        self[name] = self.root / name
        generate(self.root / "tasks.json", self[name], "tasks-mcp", *extra)
        return self[name]


@pytest.fixture(scope="module")
def packages(tasks_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("naive")
    (root / "tasks.json").write_text(httpx.get(f"{tasks_api}/openapi.json").text)
    return _Packages(root)


def _params(package: Path, base: str):
    params = package_stdio(package, MODULE)
    params.env = {**params.env, "TASKS_MCP_BASE_URL": base}
    return params


def _published(package: Path) -> dict[str, Any]:
    catalog = json.loads((package / "src" / MODULE / "catalog.json").read_text())
    return {tool["name"]: json.dumps(tool["outputSchema"]) for tool in catalog["tools"]}


@pytest.mark.anyio
async def test_by_default_a_naive_date_time_is_an_error_naming_the_problem_and_the_fix(packages, tasks_api):
    async with Client(_params(packages["default"], tasks_api)) as client:
        result = await client.call_tool("get_task", {"task_id": 1})
    text = result.content[0].text
    assert result.is_error and result.structured_content is None
    assert text.startswith("upstream response does not match Task: created_at: a date-time without a timezone"), text
    assert "The API sends date-times without a timezone where its spec says `format: date-time`" in text
    assert f'set naive_datetimes = "accept" in the typed-mcp config (or under [operations."{ONE}"]' in text
    assert "due_at" not in text  # the aware value passed
    manifest = json.loads((packages["default"] / "typed-mcp.json").read_text())
    assert manifest["naive_datetimes"] == {"accept": []}
    assert "Date-times without a timezone are refused" in (packages["default"] / "README.md").read_text()


@pytest.mark.anyio
async def test_accepted_globally_every_call_succeeds_with_naive_and_aware_values(packages, tasks_api):
    async with Client(_params(packages["all"], tasks_api)) as client:
        created = await client.call_tool("create_task", {"body": {"title": "second"}})
        listed = await client.call_tool("list_tasks", {})
        got = await client.call_tool("get_task", {"task_id": 1})
    for result in (created, listed, got):
        assert not result.is_error, result.content
    assert got.structured_content == {"title": "first", "id": 1, "created_at": NAIVE_CREATED, "due_at": AWARE_DUE}
    assert created.structured_content["created_at"].count(":") == 2  # naive: no offset
    assert listed.structured_content["result"][0] == got.structured_content
    published = _published(packages["all"])
    assert all('"date-time"' not in schema for schema in published.values()), published
    manifest = json.loads((packages["all"] / "typed-mcp.json").read_text())
    assert sorted(manifest["naive_datetimes"]["accept"]) == ["create_task", "get_task", "list_tasks"]
    assert "accepted in the answers of every tool" in (packages["all"] / "README.md").read_text()


@pytest.mark.anyio
async def test_accepted_for_one_operation_leaves_the_others_as_they_were(packages, tasks_api):
    async with Client(_params(packages["one"], tasks_api)) as client:
        got = await client.call_tool("get_task", {"task_id": 1})
        listed = await client.call_tool("list_tasks", {})
    assert not got.is_error and got.structured_content["created_at"] == NAIVE_CREATED
    assert listed.is_error and "result.0.created_at: a date-time without a timezone" in listed.content[0].text
    published, default = _published(packages["one"]), _published(packages["default"])
    assert '"date-time"' not in published["get_task"]
    assert published["list_tasks"] == default["list_tasks"] and published["create_task"] == default["create_task"]
    manifest = json.loads((packages["one"] / "typed-mcp.json").read_text())
    assert manifest["naive_datetimes"] == {"accept": ["get_task"]}
    assert {
        "operation": ONE,
        "action": manifest["curation"][0]["action"],
        "rule": f'config operations."{ONE}".naive_datetimes',
    } in manifest["curation"]
    assert "accepted in the answers of 1 tools" in (packages["one"] / "README.md").read_text()


@pytest.mark.parametrize("line", [TS1, TS2], ids=["ts1", "ts2"])
def test_strict_clients_accept_the_published_schema_for_naive_and_aware_values(packages, tasks_api, line):
    """AJV with formats validates every structuredContent against the published outputSchema."""
    calls = [
        {"name": "get_task", "arguments": {"task_id": 1}},
        {"name": "list_tasks", "arguments": {}},
        {"name": "create_task", "arguments": {"body": {"title": "from typescript"}}},
    ]
    for name, accepted in (("all", {"get_task", "list_tasks", "create_task"}), ("one", {"get_task"})):
        command = [sys.executable, "-m", MODULE, "--base-url", tasks_api]
        run = run_ts_client(command, {"PYTHONPATH": str(packages[name] / "src")}, calls, client=line)
        for result in run["results"]:
            assert result["ok"] and result["errorCode"] is None, result
            if result["name"] in accepted:
                assert not result["isError"], result
                assert result["structuredContent"] is not None
            else:  # not accepted for this operation: the clear error, never a protocol error
                assert result["isError"] and "a date-time without a timezone" in result["text"], result
        first = next(r for r in run["results"] if r["name"] == "get_task")["structuredContent"]
        assert first["created_at"] == NAIVE_CREATED and first["due_at"] == AWARE_DUE


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ('naive_datetimes = "yes"\n', "naive_datetimes"),
        (f'[operations."{ONE}"]\nnaive_datetimes = true\n', f"operations.{ONE}.naive_datetimes"),
    ],
)
def test_a_bad_value_names_the_key(tmp_path: Path, config: str, key: str):
    spec = tmp_path / "tasks.json"
    spec.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "Tasks", "version": "1"}, "paths": {}}))
    (tmp_path / "typed-mcp.toml").write_text(config)
    proc = run_cli("generate", str(spec), "--out", str(tmp_path / "out"), "--config", str(tmp_path / "typed-mcp.toml"))
    assert proc.returncode == 1 and not (tmp_path / "out").exists()
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert f"typed-mcp.toml: {key}: " in line and "'refuse' or 'accept'" in line, line
