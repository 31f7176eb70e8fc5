"""The schema budget: every tool's inputSchema + outputSchema fits in budget.BUDGET bytes; a trimmed
schema accepts everything the full one accepts (the server still validates answers with the full
model); the token report is printed; big APIs of Stripe's shape generate, list and serve."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from harness import synthetic
from harness.node_tools import TS1, TS2, run_ts_client
from support import CORPUS, HttpServer, Reply, generate, import_server
from typed_mcp.catalog import budget

SMALL = 20  # resources of the synthetic payments API in the tests: 100 operations, a recursive group of 80 models
MODULE = "payments_mcp"


def catalog_tools(out: Path, module: str) -> list[dict[str, Any]]:
    """The tools of a package's catalog.json, shared `$defs` entries put back."""
    data = json.loads((out / "src" / module / "catalog.json").read_text())
    for tool in data["tools"]:
        for key in ("inputSchema", "outputSchema"):
            defs = (tool.get(key) or {}).get("$defs")
            for name, value in (defs or {}).items():
                defs[name] = data["shared"][value]
    return data["tools"]


def over_budget(tools: list[dict[str, Any]]) -> dict[str, int]:
    sizes = {t["name"]: budget.size(t["inputSchema"]) + budget.size(t.get("outputSchema")) for t in tools}
    return {name: size for name, size in sizes.items() if size > budget.BUDGET}


@pytest.fixture(scope="module")
def payments(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("payments") / "payments-mcp"
    proc = generate(synthetic.payments_spec(SMALL), out, "payments-mcp", "--no-cache")
    return out, proc.stderr


def test_every_tool_fits_the_budget_and_the_report_says_so(payments):
    out, stderr = payments
    tools = catalog_tools(out, MODULE)
    assert len(tools) == SMALL * 5 and over_budget(tools) == {}
    trimmed = json.loads((out / "typed-mcp.json").read_text())["schema_budget"]
    assert trimmed["bytes"] == budget.BUDGET
    assert trimmed["trimmed"] and set(trimmed["trimmed"]) < {t["name"] for t in tools}
    assert set(trimmed["trimmed"].values()) <= {0, 1, 2, 3}
    for tool in tools:
        for key in ("inputSchema", "outputSchema"):
            schema = tool[key]
            text = json.dumps(schema)
            # $refs stay local, and resolve in the one `$defs`, at the root.
            defs = schema.get("$defs", {})
            for ref in {part.split('"')[0] for part in text.split('"$ref": "')[1:]}:
                assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs
            assert all('"$defs":' not in json.dumps(value) for value in defs.values())
        if tool["name"] in trimmed["trimmed"]:
            assert "(not expanded here)" in json.dumps(tool["outputSchema"])
    # The token report, plain lines on a pipe: totals, the ten biggest tools, advice for a big catalog.
    report = budget.report((out / "src" / MODULE / "catalog.json").read_text())
    all_lines = stderr.splitlines()
    lines = all_lines[all_lines.index(report.lines()[0]) - 1 :]  # from the line before the report's
    assert "tokens (bytes/4)" in lines[1] and f"{len(trimmed['trimmed'])} trimmed" in lines[1]
    assert lines[2:12] == [f"  {name}: {size:,} bytes" for name, size in report.biggest] and len(report.biggest) == 10
    assert report.tokens > budget.CLIENT_TOKENS and lines[12].startswith("advice:")
    assert "--toolsets" in lines[12] and "--read-only" in lines[12] and "--discovery" in lines[12]


def sdk_listing(out: Path, names: list[str]) -> list[dict[str, Any]]:
    """The tools as the MCP SDK lists them, untrimmed (the package's own registration)."""
    import_server(out, MODULE)
    package = sys.modules[f"{MODULE}.server"]
    from mcp.server import MCPServer

    server = MCPServer(name="full")
    for name in names:
        package.register_tool(server, package.tool_entry(name))
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in anyio.run(server.list_tools)]


def instance(schema: dict[str, Any], root: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A value of a pydantic-made JSON schema, drawing every branch of its unions and expanding
    references deep (down to 6 levels), so that values reach past a trimmed schema's depth."""
    if "$ref" in schema:
        return instance(root["$defs"][schema["$ref"].removeprefix("#/$defs/")], root, rng, depth + 1)
    if "anyOf" in schema:
        branches = schema["anyOf"]
        if depth < 6:  # prefer the expanded object over the id, while the value is not too deep
            expanded = [b for b in branches if "$ref" in b or b.get("type") in ("object", "array")]
            branches = expanded if expanded and rng.random() < 0.8 else branches
        return instance(rng.choice(branches), root, rng, depth)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        chosen = [n for n in props if n in required or (depth < 6 and rng.random() < 0.7)]
        return {name: instance(props[name], root, rng, depth) for name in chosen}
    if kind == "array":
        return [instance(schema.get("items", {}), root, rng, depth) for _ in range(rng.randint(0, 2))]
    if kind == "string":
        pattern = schema.get("pattern")
        return pattern.removeprefix("^") + "/x" if pattern else rng.choice(["id_1", "x", "usd"])
    if kind == "integer":
        return rng.randint(0, 100)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return rng.choice(["free", 3, None])


@pytest.mark.long  # half a minute of drawn values; make test checks trimmed tools through both clients below
def test_trimmed_schemas_accept_what_the_full_ones_accept_and_are_deterministic(payments):
    out, _ = payments
    published = {t["name"]: t for t in catalog_tools(out, MODULE)}
    trimmed = json.loads((out / "typed-mcp.json").read_text())["schema_budget"]["trimmed"]
    names = ["get_accounts", "get_accounts_account", "post_charges", "delete_customers_customer"]
    assert {"get_accounts", "get_accounts_account", "post_charges"} <= set(trimmed)
    full = sdk_listing(out, names)
    rng = random.Random(7)
    for tool in full:
        # The catalog is the SDK's listing within the budget, byte for byte: the same input, the same bytes.
        fitted = budget.fit(tool["inputSchema"], tool.get("outputSchema"))
        assert fitted.depth == trimmed.get(tool["name"])
        assert budget.size(fitted.output_schema) == budget.size(published[tool["name"]]["outputSchema"])
        assert fitted.output_schema == published[tool["name"]]["outputSchema"]
        if fitted.depth is None:
            continue
        assert fitted.full_bytes > budget.BUDGET
        schema = tool["outputSchema"]
        strict, open_ = jsonschema.Draft202012Validator(schema), jsonschema.Draft202012Validator(fitted.output_schema)
        for depth in range(fitted.depth + 2):  # every depth a tool may be cut at accepts what the full one does
            cut = jsonschema.Draft202012Validator(budget.trim(schema, depth))
            accepted = [value for value in (instance(schema, schema, rng) for _ in range(10)) if strict.is_valid(value)]
            assert len(accepted) >= 7  # values of the full schema, reaching past the cut
            for value in accepted:
                assert cut.is_valid(value) and open_.is_valid(value)


def test_a_trimmed_one_of_not_or_if_still_accepts_what_the_full_schema_does():
    # OpenAI's spec on the old code: a conversation item's content is a oneOf of models that the
    # budget published as open placeholders, so an answer the server's model took matched several
    # branches, and both strict TypeScript lines and the Python SDK client refused it (-32602:
    # "must match exactly one schema in oneOf"). A `not` or an `if` over a placeholder is as wrong.
    def kind(tag: str) -> dict[str, Any]:
        return {"type": "object", "properties": {"type": {"const": tag}}, "required": ["type"]}

    a, b = {"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}
    schema = {
        "type": "object",
        "properties": {
            "either": {"oneOf": [a, b]},
            "both": {"oneOf": [a, b], "anyOf": [{"type": "object"}, {"type": "string"}]},
            "other": {"not": a},
            "pick": {"if": a, "then": {"required": ["k"]}, "else": {"required": ["j"]}},
            "kept": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "$defs": {"A": kind("a"), "B": kind("b")},
    }
    value = {"either": {"type": "a"}, "both": {"type": "b"}, "other": {"type": "b"}, "pick": {"type": "b", "j": 1}}
    assert jsonschema.Draft202012Validator(schema).is_valid(value)
    trimmed = budget.trim(schema, 0)
    assert "$defs" not in trimmed  # both models cut: placeholders everywhere they were
    assert jsonschema.Draft202012Validator(trimmed).is_valid(value)
    assert jsonschema.Draft202012Validator(trimmed).is_valid({**value, "kept": 3})
    assert not jsonschema.Draft202012Validator(trimmed).is_valid({**value, "kept": 3.5})
    properties = trimmed["properties"]
    assert "oneOf" not in properties["either"] and len(properties["either"]["anyOf"]) == 2
    assert properties["both"]["allOf"] == [{"anyOf": properties["either"]["anyOf"]}]
    assert properties["kept"] is schema["properties"]["kept"]  # nothing cut under it: as it was
    assert "not" not in properties["other"] and "if" not in properties["pick"]


def test_a_property_named_like_a_keyword_keeps_its_definitions(tmp_path):
    # Microsoft Graph: a property called `default` refers to a model. The reference walk skipped every
    # key named `default` (the keyword's value is data), so in a closure big enough to be derived in
    # one pass (more than catalog.worker.POOL_DEFS definitions) that model's definition was left out:
    # a `$ref` to nothing, and the TypeScript client's AJV refused the whole listing
    # ("MissingRefError: can't resolve reference #/$defs/Only").
    found: list[str] = []
    budget._refs({"properties": {"default": {"$ref": "#/$defs/A"}, "enum": {"$ref": "#/$defs/B"}}}, found)
    budget._refs({"default": {"$ref": "#/$defs/C"}, "enum": [{"$ref": "#/$defs/D"}]}, found)  # data: no references
    assert found == ["A", "B"]
    chain = {f"C{i}": {"type": "object", "properties": {f"c{i}": {"type": "string"}}} for i in range(240)}
    chain["Only"] = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    root = {f"p{i}": {"$ref": f"#/components/schemas/C{i}"} for i in range(240)}
    chain["Root"] = {"type": "object", "properties": {**root, "default": {"$ref": "#/components/schemas/Only"}}}
    chain["Wrapper"] = {"type": "object", "properties": {"root": {"$ref": "#/components/schemas/Root"}}}
    answer = {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Root"}}}}
    wrapped = {
        "description": "ok",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Wrapper"}}},
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Keywords", "version": "1"},
        "paths": {  # the first tool's schema is derived alone; the second's comes from the one pass
            "/root": {"get": {"operationId": "getRoot", "responses": {"200": answer}}},
            "/again": {"get": {"operationId": "getAgain", "responses": {"200": wrapped}}},
        },
        "components": {"schemas": chain},
    }
    out = tmp_path / "keywords-mcp"
    generate(spec, out, "keywords-mcp")
    for tool in catalog_tools(out, "keywords_mcp"):
        schema = tool["outputSchema"]
        assert len(schema["$defs"]) > 200 and "Only" in schema["$defs"], tool["name"]  # whole
        assert schema["$defs"]["Only"]["required"] == ["name"]
    listed = run_ts_client(
        [sys.executable, "-m", "keywords_mcp"],
        {"PYTHONPATH": str(out / "src")},
        [],
        list_only=True,
        compile_schemas=True,
    )
    assert listed["tools"] == 2 and listed["schemas"]["failures"] == []
    # Trimmed, a reference under a property so named becomes a placeholder too (no `$ref` to nothing).
    cut = budget.trim({"type": "object", "properties": {"default": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}}, 0)
    assert cut == {"type": "object", "properties": {"default": {"description": "A (not expanded here)"}}}


SECRET = {"PAYMENTS_MCP_BASIC_AUTH_USERNAME": "sk", "PAYMENTS_MCP_BASIC_AUTH_PASSWORD": "x"}


def test_the_server_still_validates_answers_with_the_full_model(payments, monkeypatch):
    out, _ = payments
    rng = random.Random(3)
    full = sdk_listing(out, ["get_accounts_account"])[0]["outputSchema"]
    good = instance(full, full, rng)
    good.update(id="acct_1", object="account", created=1, livemode=False, status="active")
    # Wrong deep inside, below what the published (trimmed) schema spells out: the expanded bank of the
    # expanded balance of the expanded application has a `created` that is no integer.
    names = synthetic._names()[:SMALL]

    def resource(index: int, **more: Any) -> dict[str, Any]:
        return {"id": f"id_{index}", "object": names[index], "created": 1, "livemode": True, "status": "active", **more}

    wrong = dict(good)
    wrong[f"{names[1]}_ref"] = resource(1, **{f"{names[2]}_ref": resource(2, **{f"{names[3]}_ref": resource(3)})})
    wrong[f"{names[1]}_ref"][f"{names[2]}_ref"][f"{names[3]}_ref"]["created"] = "soon"
    published = next(t for t in catalog_tools(out, MODULE) if t["name"] == "get_accounts_account")["outputSchema"]
    assert jsonschema.Draft202012Validator(published).is_valid(wrong)  # the published schema is open there
    assert not jsonschema.Draft202012Validator(full).is_valid(wrong)

    async def call(answer: Any) -> Any:
        async with Client(import_server(out, MODULE)) as client:
            upstream.routes["/v1/accounts/acct_1"] = Reply(200, answer)
            return await client.call_tool("get_accounts_account", {"account": "acct_1"})

    with HttpServer() as upstream:
        monkeypatch.setenv("PAYMENTS_MCP_BASE_URL", upstream.url)
        for key, value in SECRET.items():
            monkeypatch.setenv(key, value)
        passed = anyio.run(call, good)
        assert not passed.is_error, passed.content
        assert passed.structured_content["id"] == "acct_1"
        assert jsonschema.Draft202012Validator(published).is_valid(passed.structured_content)
        failed = anyio.run(call, wrong)
    assert failed.is_error
    assert "created" in failed.content[0].text and f"{names[1]}_ref" in failed.content[0].text


BUILT_AT_IMPORT = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
models = importlib.import_module("payments_mcp.models")
from payments_mcp._runtime import OpenModel
classes = [getattr(models, name) for name in models.__all__]
open_models = [c for c in classes if isinstance(c, type) and issubclass(c, OpenModel)]
biggest = max({c.__module__ for c in open_models}, key=lambda m: sum(c.__module__ == m for c in open_models))
group = [c for c in open_models if c.__module__ == biggest]
lazy = [c for c in open_models if c.model_config.get("defer_build")]
print(json.dumps({
    "models": len(open_models), "group": len(group), "group_lazy": sum(c in lazy for c in group),
    "lazy": len(lazy), "lazy_built": sum(c.__pydantic_complete__ for c in lazy),
}))
"""


def test_importing_every_model_builds_none_of_the_big_recursive_group(payments):
    # In a group of mutually recursive models each model's validator holds the whole group: built all
    # at once, at import, the payments API's 380 took 17 s and 1.3 GB in every catalog worker and in
    # the server. The group, and the models that use it, are built on first use, one tool's at a time
    # (the catalog worker never builds them: it derives their JSON schemas once, together).
    out, _ = payments
    proc = subprocess.run(
        [sys.executable, "-c", BUILT_AT_IMPORT, str(out / "src")], capture_output=True, text=True, check=True
    )
    counts = json.loads(proc.stdout)
    assert counts["group"] >= 3 * SMALL and counts["group_lazy"] == counts["group"]  # a big recursive group, deferred
    assert counts["models"] > counts["lazy"] > counts["group"]  # its users too; the other models are not
    assert counts["lazy_built"] == 0


@pytest.mark.long  # a minute on 2 cores; make test lists the package through both lines below
def test_the_strict_typescript_client_lists_the_trimmed_package(payments):
    out, _ = payments
    run = run_ts_client(
        [sys.executable, "-m", MODULE],
        {"PYTHONPATH": str(out / "src")},
        [],
        list_only=True,
        timeout=300,
        compile_schemas=True,
    )
    assert run["tools"] == SMALL * 5
    assert run["schemas"]["failures"] == [] and run["schemas"]["compiled"] == 2 * SMALL * 5


@pytest.mark.parametrize(
    "spec",
    [
        "oai__v3.0-petstore.yaml",
        "apisguru__docker.com_engine.json",
        pytest.param("apisguru__spotify.com.json", marks=pytest.mark.long),  # more of the same kind: test-long
        pytest.param("pypi__airflow-core-v2-rest-api.yaml", marks=pytest.mark.long),
        pytest.param("github__api.github.com.json", marks=pytest.mark.long),  # about a minute on 2 cores
    ],
)
def test_corpus_specs_fit_the_budget(spec, tmp_path):
    path = CORPUS / spec
    if not path.is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    out = tmp_path / "budget-pkg"
    generate(path, out, "budget-pkg", "--no-verify")
    tools = catalog_tools(out, "budget_pkg")
    assert tools and over_budget(tools) == {}


def test_the_report_is_a_table_on_a_terminal_and_quiet_with_q(tmp_path, monkeypatch):
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from support import REPO, run_cli
    from typed_mcp import cli

    catalog = (REPO / "generated" / "weather-mcp" / "src" / "weather_mcp" / "catalog.json").read_text()
    screen = io.StringIO()
    monkeypatch.setattr(cli, "err", Console(file=screen, force_terminal=True, width=120, highlight=False))
    cli._budget(SimpleNamespace(summary=SimpleNamespace(catalog=budget.report(catalog))))
    shown = screen.getvalue()
    assert "tokens (bytes/4)" in shown and "biggest tools" in shown and "create_report" in shown and "┃" in shown
    assert "advice" not in shown  # 8 tools: far below what clients take
    quiet = run_cli(
        "generate", str(REPO / "specs" / "weather-api.json"), "--out", str(tmp_path / "w"), "--no-snapshot", "-q"
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_trimmed_tool_names_the_resource_that_holds_its_schemas_whole(payments):
    """A tool the budget trimmed says, in its description, which resource holds its schemas whole;
    through a real server over stdio and the SDK client, resources/templates/list offers it and
    resources/read gives the schemas exactly as the SDK derives them, untrimmed."""
    out, _ = payments
    published = {t["name"]: t for t in catalog_tools(out, MODULE)}
    trimmed = json.loads((out / "typed-mcp.json").read_text())["schema_budget"]["trimmed"]
    name = "post_charges"
    address = f"schema://payments-mcp/tools/{name}"
    assert name in trimmed and address in published[name]["description"]
    assert all(
        "schema://" not in tool.get("description", "") for tool in published.values() if tool["name"] not in trimmed
    )
    full = sdk_listing(out, [name])[0]
    assert "not expanded here" in json.dumps(published[name]) and "not expanded here" not in json.dumps(full)

    async def read() -> tuple[list[str], dict[str, Any], str]:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", MODULE], env={**os.environ, "PYTHONPATH": str(out / "src")}
        )
        async with Client(server) as client:
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            whole = json.loads((await client.read_resource(address)).contents[0].text)
            with pytest.raises(MCPError) as unknown:
                await client.read_resource("schema://payments-mcp/tools/no_such_tool")
        return templates, whole, str(unknown.value)

    templates, whole, unknown = anyio.run(read)
    assert templates == ["schema://payments-mcp/tools/{name}"]
    assert whole == {key: full[key] for key in ("name", "inputSchema", "outputSchema")}
    assert "no_such_tool" in unknown


@pytest.mark.parametrize("client", [TS1, TS2], ids=lambda client: client.id)
def test_both_typescript_clients_read_a_trimmed_tools_whole_schemas(payments, client):
    out, _ = payments
    address = "schema://payments-mcp/tools/post_charges"
    run = run_ts_client(
        [sys.executable, "-m", MODULE],
        {"PYTHONPATH": str(out / "src")},
        [{"templates": True}, {"resource": address}, {"resource": "schema://payments-mcp/tools/nope"}],
        client=client,
    )
    templates, read, unknown = run["results"]
    assert templates["ok"], templates
    assert [t["uriTemplate"] for t in templates["structuredContent"]["resourceTemplates"]] == [
        "schema://payments-mcp/tools/{name}"
    ]
    assert read["ok"] and json.loads(read["text"]) == {
        key: sdk_listing(out, ["post_charges"])[0][key] for key in ("name", "inputSchema", "outputSchema")
    }
    assert not unknown["ok"] and unknown["errorCode"] == -32602, unknown
