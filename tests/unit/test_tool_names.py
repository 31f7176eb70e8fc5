"""Tool names on real specs: FastAPI's default operationIds become function names, one function on two
routes is told apart by the fewest path words that differ (never `api`/`v1`), no name loses a word
between two it keeps, names stay within 64 characters, a hash only where a name past 64 had to be cut
and still collided, and nothing depends on the order of the spec. Measured at the plan stage, where
names are chosen; one FastAPI app end to end."""

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
ZENML = REPO / "tests" / "data" / "zenml-0.98.0-operations.json"  # see zenml-0.98.0-operations.md
APP = REPO / "tests" / "fastapi_names_app.py"


def planned(source: Path, **options) -> list:
    document = normalize(load(str(source)), ref_root=ref_root(source))
    return plan(document, package_name="x-mcp", module="x_mcp", **options).operations


def tool_names(source: Path, **options) -> dict[str, str]:
    """(METHOD /path) -> tool name, from load -> normalize -> plan."""
    return {op.key: op.tool_name for op in planned(source, **options)}


_FILLER = {"a", "an", "the", "of", "for", "by", "with"}


def _word(word: str) -> str:
    """A word as a name may spell it: its usual short form, in the singular."""
    word = names._SHORT_FORMS.get(word, word)
    return names.singular(word)


def dropped_mid_sequence(name: str, operation_id: str | None, method: str, path: str) -> list[str]:
    """The words of the operation's own name that the tool name leaves out while keeping a word after
    them: `get_or_api_v1_workspaces_project_name_id` for `get_or_create_pipeline_run` drops `create`.
    The operation's own name is its operationId without a route it repeats at its end (FastAPI's
    `{function}{path}_{method}`: leaving out that whole tail drops nothing between kept words), else
    its method and path. Not counted: filler words, a word said before, versions, the method, and the
    words of path parameters (a path-spelled name drops those)."""
    source = names.snake_case(operation_id or f"{method} {path}")
    for verb in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
        route = names.snake_case(f"{path} {verb}")
        if operation_id and source.endswith("_" + route) and len(source) > len(route) + 1:
            source = source[: -len(route) - 1]
            break
    variables = {w for v in re.findall(r"{([^{}]*)}", path) for w in names.snake_case(v).split("_")}
    kept = {_word(w) for w in HASH.sub("", name).split("_")}
    parts = HASH.sub("", name).split("_")
    # A word an operationId ran together that the name spells apart (`trackingfield`: tracking_field).
    joined = {"".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 2, min(len(parts), i + 8) + 1)}
    seen: set[str] = set()
    counted = []  # (word, whether the name keeps it)
    for word in source.split("_"):
        if word in _FILLER or word in variables or word == method.lower() or re.fullmatch(r"v\d+\w*", word):
            continue
        if _word(word) not in seen:
            seen.add(_word(word))
            counted.append((word, _word(word) in kept or word in joined))
    return [w for i, (w, present) in enumerate(counted) if not present and any(p for _, p in counted[i + 1 :])]


def assert_targets(operations, limit: int = 64):  # the limits of the issue
    values = [op.tool_name for op in operations]
    assert len(set(values)) == len(values)
    assert all(VALID.match(n) for n in values)
    assert max(map(len, values)) <= limit
    cut = {
        op.tool_name: dropped
        for op in operations
        if (dropped := dropped_mid_sequence(op.tool_name, op.operation_id, op.method, op.path))
    }
    assert not cut, cut
    # A hash only where the operation's every whole name is past the limit, and its cut one collided.
    hashed = [op for op in operations if HASH.search(op.tool_name)]
    assert all(
        min(map(len, names.tool_name_candidates(op.operation_id, op.method.lower(), op.key.split(" ", 1)[1]))) > limit
        for op in hashed
    ), [op.tool_name for op in hashed]


@pytest.mark.slow  # starts the app / runs the CLI
def test_a_fastapi_app_with_default_operation_ids(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running([sys.executable, str(APP), "--port", str(port)], f"{base}/openapi.json"):
        proc = run_cli(
            "generate",
            f"{base}/openapi.json",
            "--out",
            str(tmp_path / "out"),
            "--snapshot",
            str(tmp_path / "app-openapi.json"),
            "--no-verify",
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
        # The same function on two routers: the one whose path has a scope the other lacks says it.
        "GET /projects/{project_id}": "read_project",
        "GET /admin/projects/{project_id}/full": "read_admin_project",
        "DELETE /projects/{project_id}": "delete_project",
        "DELETE /admin/projects/{project_id}": "delete_admin_project",
        # One function on a global and a per-project route (ZenML's way): the global one keeps the
        # function's name, the other says its project; `api` and `v1`, on both, are said by neither.
        "GET /api/v1/runs": "list_runs",
        "GET /api/v1/workspaces/{project_name_or_id}/runs": "list_project_runs",
        "POST /api/v1/runs": "get_or_create_pipeline_run",
        "POST /api/v1/workspaces/{project_name_or_id}/runs": "get_or_create_project_pipeline_run",
        # Both name a project: the collection tells them apart.
        "GET /api/v1/projects/{project_name_or_id}": "get_project",
        "GET /api/v1/workspaces/{project_name_or_id}": "get_workspace_project",
        "GET /api/v1/deployments/{deployment_id}": "get_deployment",
        "GET /api/v1/pipeline_deployments/{deployment_id}": "get_pipeline_deployment",
        "GET /api/v1/work_queues": "list_work_queues",
        "GET /api/v1/work_pools/{work_pool_name}/queues": "list_work_pool_queues",
        # One route serving GET and HEAD under one operationId: the method tells them apart.
        "GET /api/v1/info": "server_info_get",
        "HEAD /api/v1/info": "server_info_head",
    }
    operations = [
        (key.split(" ", 1)[1], key.split(" ", 1)[0].lower(), op)
        for key, op in ((f"{m.upper()} {p}", op) for p, item in _spec(tmp_path).items() for m, op in item.items())
    ]
    for path, method, op in operations:
        name = next(tool for tool, key in manifest["tools"].items() if key == f"{method.upper()} {path}")
        assert not dropped_mid_sequence(name, op["operationId"], method, path), name
        assert not {"api", "v1"} & set(name.split("_")), name


def _spec(tmp_path: Path) -> dict:
    """The paths of the spec the FastAPI app served, as the generator saved it beside the package."""
    return json.loads((tmp_path / "app-openapi.json").read_text())["paths"]


def single_functions(operations) -> dict[str, str]:
    """(METHOD /path) -> function name, for the function names only one operation has."""
    functions: dict[str, list[str]] = {}
    for op in operations:
        functions.setdefault(names.base_tool_name(op.operation_id, op.method.lower(), op.path), []).append(op.key)
    return {keys[0]: name for name, keys in functions.items() if len(keys) == 1}


def test_prefect_server():
    operations = planned(PREFECT)
    result = {op.key: op.tool_name for op in operations}
    assert len(result) == 188
    assert_targets(operations)
    assert max(map(len, result.values())) <= 40
    assert result["GET /flows/{id}"] == "read_flow"
    assert result["POST /flow_runs/"] == "create_flow_run"
    assert result["POST /deployments/{id}/create_flow_run"] == "create_flow_run_from_deployment"
    # The same function name on two routers: the one under a work pool says so, where the name says queue.
    assert result["POST /work_queues/"] == "create_work_queue"
    assert result["POST /work_pools/{work_pool_name}/queues"] == "create_work_pool_queue"
    assert result["POST /templates/validate"] == "validate_template"
    assert result["POST /automations/templates/validate"] == "validate_automations_template"
    # Where the function names are unique, the tool is the function (or a shortening of it).
    unique = single_functions(operations)
    assert sum(result[key] == name for key, name in unique.items()) >= 0.95 * len(unique)


def test_zenml_server():
    """ZenML registers 72 functions on a global and a per-project route; no name keeps `api_v1` or the
    route, none loses a word of its function's name, and the per-project ones say `project`."""
    operations = planned(ZENML)
    result = {op.key: op.tool_name for op in operations}
    assert len(result) == 268
    assert_targets(operations)
    # `api` and `v1` only where the function's own name says them (`create_api_key`)
    said = {
        op.tool_name: set(names.base_tool_name(op.operation_id, op.method, op.path).split("_")) for op in operations
    }
    assert not [name for name, own in said.items() if {"api", "v1"} & set(name.split("_")) - own]
    assert sum(len(n) > 40 for n in result.values()) <= 2  # two function names are longer themselves
    assert result["GET /api/v1/runs"] == "list_runs"
    assert result["GET /api/v1/workspaces/{project_name_or_id}/runs"] == "list_project_runs"
    assert result["POST /api/v1/runs"] == "get_or_create_pipeline_run"
    assert result["POST /api/v1/workspaces/{project_name_or_id}/runs"] == "get_or_create_project_pipeline_run"
    assert result["GET /api/v1/model_versions"] == "list_model_versions"
    assert result["GET /api/v1/workspaces/{project_name_or_id}/stacks"] == "list_project_stacks"
    assert result["POST /api/v1/workspaces/{workspace_name_or_id}/secrets"] == "create_workspace_secret"
    # Every function name the API has once (and within 40) is its tool's name.
    unique = single_functions(operations)
    assert [key for key, name in unique.items() if result[key] != name and len(name) <= 40] == []


def corpus_specs():
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [
        pytest.param(path, id=meta["file"], marks=big_spec(meta))
        for path, meta in corpus.discover(CORPUS)
        if meta["operations"] != "0"
    ]


def big_spec(meta: dict[str, str]) -> list[pytest.MarkDecorator]:
    """`slow` for a spec over 1 MB: tens of seconds each on a loaded machine (make test runs them, make
    test-fast does not)."""
    return [pytest.mark.slow] if int(meta["size_bytes"].split()[0]) > 1_000_000 else []


@pytest.mark.parametrize("path", corpus_specs())
def test_corpus_names_meet_the_targets(path):
    assert_targets(planned(path))


@pytest.mark.parametrize(
    "name",
    [
        "prefect",
        # 4 MB and 12 MB, each planned three times: make test-long.
        pytest.param("kubernetes__swagger-1.13.json", marks=pytest.mark.long),
        pytest.param("cloudflare__openapi.json", marks=pytest.mark.long),
    ],
)
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
    operations = planned(PREFECT, tool_prefix="prefect")
    prefixed = {op.key: op.tool_name for op in operations}
    assert prefixed.keys() == plain.keys()
    assert all(n.startswith("prefect_") for n in prefixed.values())
    assert prefixed["GET /flows/{id}"] == "prefect_read_flow"
    assert_targets(operations, limit=64)  # the prefix counts within the limit
    # Within 40 but for names that cannot be shortened without losing a word.
    over = [n.removeprefix("prefect_") for n in prefixed.values() if len(n) > 40]
    assert over and all(names.shorter_names(n)[-1] == n for n in over), over
    with pytest.raises(SpecError, match="tool prefix"):
        tool_names(PREFECT, tool_prefix="9lives")


@pytest.mark.slow  # starts the app / runs the CLI
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
