"""Tool names on real specs: FastAPI's default operationIds become function names, names stay within
the limits (64; 40 for all but 2%), a hash only for a real collision, and nothing depends on the
order of the spec. Measured at the plan stage, where names are chosen; one FastAPI app end to end."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from harness import corpus, ref_root
from harness.demo.process import free_port, running
from support import CORPUS, REPO, run_cli
from typed_mcp import names
from typed_mcp.errors import SpecError
from typed_mcp.plan.build import plan
from typed_mcp.spec.load import load
from typed_mcp.spec.normalize import normalize

HASH = re.compile(r"_[0-9a-f]{8}$")
VALID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
PREFECT = REPO / "tests" / "data" / "prefect-3.9.1-openapi.json"  # see prefect-3.9.1-openapi.md
APP = REPO / "tests" / "fastapi_names_app.py"


def tool_names(source: Path, **options) -> dict[str, str]:
    """(METHOD /path) -> tool name, from load -> normalize -> plan."""
    document = normalize(load(str(source)), ref_root=ref_root(source))
    api = plan(document, package_name="x-mcp", module="x_mcp", **options)
    return {op.key: op.tool_name for op in api.operations}


def assert_targets(result: dict[str, str], limit: int = 64, target: int = 40):  # the limits of the issue
    values = list(result.values())
    assert len(set(values)) == len(values)
    assert all(VALID.match(n) for n in values)
    assert max(map(len, values)) <= limit
    over = [n for n in values if len(n) > target]
    assert len(over) <= 0.02 * len(values), over
    assert not [n for n in values if HASH.search(n)]


def test_a_fastapi_app_with_default_operation_ids(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running([sys.executable, str(APP), "--port", str(port)], f"{base}/openapi.json"):
        proc = run_cli(
            "generate", f"{base}/openapi.json", "--out", str(tmp_path / "out"), "--no-snapshot", "--no-verify"
        )
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "typed-mcp.json").read_text())
    assert manifest["module"] == "todo_mcp"  # "Todo Service REST API"
    assert {op: tool for tool, op in manifest["tools"].items()} == {
        "GET /health": "health_check",
        "GET /projects/": "list_projects",
        "POST /projects/": "create_project",
        "GET /projects/{project_id}/tasks/": "list_tasks",
        "GET /projects/{project_id}/tasks/{task_id}": "read_task",
        "POST /projects/{project_id}/tasks/{task_id}/assignees/{user_id}": "add_assignee_to_task_for_user_in_project",
        # The same function on two routers: both keep more of their operationId, neither a hash.
        "GET /projects/{project_id}": "read_project_projects_project_id",
        "GET /admin/projects/{project_id}/full": "read_project_admin_id_full",
        "DELETE /projects/{project_id}": "delete_project_projects_project_id",
        "DELETE /admin/projects/{project_id}": "delete_project_admin_projects_project_id",
    }


def test_prefect_server():
    spec = json.loads(PREFECT.read_text())
    result = tool_names(PREFECT)
    assert len(result) == 188
    assert_targets(result)
    assert result["GET /flows/{id}"] == "read_flow"
    assert result["POST /flow_runs/"] == "create_flow_run"
    assert result["POST /deployments/{id}/create_flow_run"] == "create_flow_run_from_deployment"
    # The same function name on two routers: each keeps more of its operationId.
    assert result["POST /work_queues/"] == "create_work_queue_work_queues"
    assert result["POST /work_pools/{work_pool_name}/queues"] == "create_work_queue_pools_name"
    # Where the function names are unique, the tool is the function (or a shortening of it).
    functions: dict[str, list[str]] = {}
    for path, item in spec["paths"].items():
        for method, op in item.items():
            functions.setdefault(names.base_tool_name(op["operationId"], method, path), []).append(
                f"{method.upper()} {path}"
            )
    unique = {keys[0]: name for name, keys in functions.items() if len(keys) == 1}
    assert sum(result[key] == name for key, name in unique.items()) >= 0.95 * len(unique)


def corpus_specs():
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [pytest.param(path, id=meta["file"]) for path, meta in corpus.discover(CORPUS) if meta["operations"] != "0"]


@pytest.mark.parametrize("path", corpus_specs())
def test_corpus_names_meet_the_targets(path):
    assert_targets(tool_names(path))


@pytest.mark.parametrize("name", ["prefect", "kubernetes__swagger-1.13.json", "cloudflare__openapi.json"])
def test_names_do_not_depend_on_spec_order(name, tmp_path):
    path = PREFECT if name == "prefect" else CORPUS / name
    if not path.is_file():
        pytest.skip(f"no spec {path}")
    first = tool_names(path)
    spec = json.loads(path.read_text())
    for seed in (1, 2):
        paths = list(spec["paths"].items())
        random.Random(seed).shuffle(paths)
        shuffled = tmp_path / f"shuffled-{seed}.json"
        shuffled.write_text(json.dumps({**spec, "paths": dict(paths)}))
        assert tool_names(shuffled) == first


def test_prefix_starts_every_name_within_the_limits():
    plain = tool_names(PREFECT)
    prefixed = tool_names(PREFECT, tool_prefix="prefect")
    assert prefixed.keys() == plain.keys()
    assert all(n.startswith("prefect_") for n in prefixed.values())
    assert prefixed["GET /flows/{id}"] == "prefect_read_flow"
    assert_targets(prefixed)  # the prefix counts within 64 and 40
    with pytest.raises(SpecError, match="tool prefix"):
        tool_names(PREFECT, tool_prefix="9lives")


def test_the_command_line_prefix_starts_every_tool_name(tmp_path: Path):
    out = tmp_path / "wx"
    proc = run_cli(
        "generate",
        str(REPO / "specs" / "weather-api.json"),
        "--out",
        str(out),
        "--package-name",
        "weather-mcp",
        "--tool-prefix",
        "wx",
    )
    assert proc.returncode == 0, proc.stderr
    tools = json.loads((out / "typed-mcp.json").read_text())["tools"]
    assert sorted(tools) == sorted(
        f"wx_{name}"
        for name in json.loads((REPO / "generated" / "weather-mcp" / "typed-mcp.json").read_text())["tools"]
    )
    bad = run_cli(
        "generate", str(REPO / "specs" / "weather-api.json"), "--out", str(tmp_path / "bad"), "--tool-prefix", "9x"
    )
    assert bad.returncode == 1 and bad.stderr.strip().startswith("error: tool prefix '9x'"), bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()
