"""Curation that survives regeneration: x-mcp in the spec, OpenAPI Overlays (--overlay) and the
config file (--config), through the CLI and a real generated server driven by the MCP SDK client."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import HttpServer, Reply, generate, import_server, run_cli, tree_digest
from typed_mcp.errors import SpecError

ITEM = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
}


def json_op(op_id: str, tags: list[str], schema: dict | None = None, **extra) -> dict:
    return {
        "operationId": op_id,
        "tags": tags,
        "summary": f"The {op_id} operation",
        "responses": {
            "200": {
                "description": "ok",
                "content": {"application/json": {"schema": schema or {"$ref": "#/components/schemas/Item"}}},
            }
        },
        **extra,
    }


ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]


def spec(**root) -> dict:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Curated", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9/api"}],
        "components": {"schemas": {"Item": ITEM}},
        "paths": {
            "/items": {
                "get": json_op(
                    "listItems", ["items"], {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}
                ),
                "post": json_op("createItem", ["items"]),
            },
            "/items/{id}": {
                "get": json_op("getItem", ["items"], parameters=ID),
                "delete": json_op("deleteItem", ["items"], parameters=ID),
            },
            "/admin/stats": {"get": json_op("adminStats", ["items", "admin"])},
            "/health": {"get": json_op("health", ["meta"])},
            "/report": {"get": json_op("getReport", ["items"])},
            "/broken": {"get": json_op("getBroken", ["items"])},
        },
        **root,
    }


CONFIG = """
[include]
tags = ["items"]

[exclude]
methods = ["delete"]
paths = ["/admin/*"]
operation_ids = ["create*"]

[rename]
"GET /items/{id}" = "fetch_item"

[operations.listItems]
title = "List items"
description = "Every item there is."

[operations."GET /broken"]
output_schema = false

[operations.getReport]
on_mismatch = "text"

[auth]
basic = true

[headers]
X-Client = "curated"
"""


def manifest(out: Path) -> dict:
    return json.loads((out / "typed-mcp.json").read_text())


def catalog(out: Path, module: str) -> dict[str, dict]:
    tools = json.loads((out / "src" / module / "catalog.json").read_text())["tools"]
    return {tool["name"]: tool for tool in tools}


@pytest.fixture(scope="module")
def curated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("curated")
    (root / "typed-mcp.toml").write_text(CONFIG)
    out = root / "curated-api"
    generate(spec(), out, "curated-api", "--config", str(root / "typed-mcp.toml"))
    return out


def test_config_selects_renames_and_describes(curated: Path):
    data = manifest(curated)
    assert data["tools"] == {
        "list_items": "GET /items",
        "fetch_item": "GET /items/{id}",
        "get_report": "GET /report",
        "get_broken": "GET /broken",
    }
    assert data["curation"] == [
        {"operation": "*", "action": "auth basic added (sent when configured)", "rule": "config auth"},
        {"operation": "*", "action": "header X-Client added", "rule": "config headers"},
        {"operation": "GET /items", "action": "title replaced", "rule": "config operations.listItems.title"},
        {
            "operation": "GET /items",
            "action": "description replaced",
            "rule": "config operations.listItems.description",
        },
        {"operation": "POST /items", "action": "excluded", "rule": "config exclude.operation_ids"},
        {"operation": "GET /items/{id}", "action": "renamed to fetch_item", "rule": "config rename"},
        {"operation": "DELETE /items/{id}", "action": "excluded", "rule": "config exclude.methods"},
        {"operation": "GET /admin/stats", "action": "excluded", "rule": "config exclude.paths"},
        {"operation": "GET /health", "action": "excluded", "rule": "config include.tags"},
        {
            "operation": "GET /report",
            "action": "text on mismatch (no outputSchema)",
            "rule": "config operations.getReport.on_mismatch",
        },
        {
            "operation": "GET /broken",
            "action": "outputSchema dropped (JSON as text)",
            "rule": 'config operations."GET /broken".output_schema',
        },
    ]
    assert data["curated_by"][0]["config"] == "typed-mcp.toml"
    tools = catalog(curated, "curated_api")
    assert tools["list_items"]["title"] == "List items"
    assert tools["list_items"]["description"] == "Every item there is."
    assert "outputSchema" in tools["fetch_item"] and "outputSchema" in tools["list_items"]
    assert "outputSchema" not in tools["get_broken"]
    assert "outputSchema" not in tools["get_report"]


def test_regenerating_with_the_same_config_is_byte_identical(curated: Path, tmp_path: Path):
    again = tmp_path / "curated-api"
    generate(spec(), again, "curated-api", "--config", str(curated.parent / "typed-mcp.toml"))
    assert tree_digest(again) == tree_digest(curated)


@pytest.fixture
def upstream(monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv("CURATED_API_BASE_URL", server.url + "/api")
        server.routes["/api/items/7"] = Reply(200, {"id": 7, "name": "seven"})
        server.routes["/api/report"] = Reply(200, {"id": 1})  # `name` is required by Item
        server.routes["/api/broken"] = Reply(200, {"id": "not a number"})
        yield server


@pytest.mark.anyio
async def test_the_curated_server_answers_as_configured(curated: Path, upstream: HttpServer, monkeypatch):
    server = import_server(curated, "curated_api")
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {"list_items", "fetch_item", "get_report", "get_broken"}
        assert listed["get_report"].output_schema is None and listed["get_broken"].output_schema is None

        # Without credentials the call still goes out (auth is not `required`), with the fixed header.
        result = await client.call_tool("fetch_item", {"id": 7})
        assert not result.is_error and result.structured_content == {"id": 7, "name": "seven"}
        assert "authorization" not in upstream.seen[-1].headers
        assert upstream.seen[-1].headers["x-client"] == "curated"

        monkeypatch.setenv("CURATED_API_BASIC_USERNAME", "kinto")
        monkeypatch.setenv("CURATED_API_BASIC_PASSWORD", "s3cret")
        result = await client.call_tool("fetch_item", {"id": 7})
        assert not result.is_error
        assert upstream.seen[-1].headers["authorization"] == "Basic " + base64.b64encode(b"kinto:s3cret").decode()
        assert upstream.seen[-1].headers["x-client"] == "curated"

        # `text` on mismatch: the data as text after a warning naming the field, no structuredContent.
        result = await client.call_tool("get_report", {})
        assert not result.is_error and result.structured_content is None
        warning, data = result.content[0].text.split("\n", 1)
        assert (
            warning.startswith("warning: upstream response does not match Item") and "name: Field required" in warning
        )
        assert json.loads(data) == {"id": 1}

        # The outputSchema dropped: the JSON as text, never checked against the (broken) model.
        result = await client.call_tool("get_broken", {})
        assert not result.is_error and result.structured_content is None
        assert json.loads(result.content[0].text) == {"id": "not a number"}


def one_line_error(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ('[exclude]\nmethod = ["DELETE"]\n', "exclude.method", "unknown key"),
        ('colour = "blue"\n', "colour", "unknown key"),
        ('[operations.getItem]\non_mismatch = "ignore"\n', "operations.getItem.on_mismatch", "'error' or 'text'"),
        ('[rename]\n"GET /nothing" = "x"\n', 'rename."GET /nothing"', "matches no operation"),
        ('[rename]\ngetItem = "Fetch Item"\n', "rename.getItem", "is not a tool name"),
        ('[headers]\nAuthorization = "Bearer x"\n', "headers.Authorization", "credentials go in [auth]"),
        # The generator and the runtime refuse the same header names (typed_mcp.runtime.contracts).
        ('[headers]\nTransfer-Encoding = "chunked"\n', "headers.Transfer-Encoding", "the HTTP client sets itself"),
        ('[headers]\nProxy-Authorization = "Basic x"\n', "headers.Proxy-Authorization", "the HTTP client sets"),
        ('[headers]\n"X-Client\\n" = "x"\n', 'headers."X-Client\\n"', "not an HTTP header name"),
        ("[toolsets.Reading]\ntags = ['items']\n", "toolsets.Reading", "not a toolset name"),
        ("[toolsets.empty]\n", "toolsets.empty", "selects nothing"),
        ("[toolsets.x]\noperations = ['GET /nope']\n", "toolsets.x.operations", "matches no operation"),
        ("[toolsets.x]\nmethods = ['FETCH']\n", "toolsets.x.methods", "not an HTTP method"),
        ("[toolsets.x]\ntag = ['items']\n", "toolsets.x.tag", "unknown key"),
        ("[search]\nsynonym = {}\n", "search.synonym", "unknown key"),
        ("[search.synonyms]\nissue = ['--']\n", "search.synonyms.issue", "has no word in it"),
        ("[operations.getItem]\nkeywords = [' ']\n", "operations.getItem.keywords", "has no word in it"),
    ],
)
def test_a_bad_config_is_one_line_naming_file_and_key_and_leaves_the_output(
    tmp_path: Path, text: str, key: str, problem: str
):
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    config = tmp_path / "typed-mcp.toml"
    config.write_text(text)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    proc = run_cli("generate", str(spec_file), "--out", str(out), "--config", str(config), "--no-verify")
    assert proc.returncode == 1
    line = one_line_error(proc)
    assert line.startswith(f"error: {config}: {key}: "), line
    assert problem in line
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_a_pyproject_table_is_a_config(tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "mine"\n\n[tool.typed-mcp.exclude]\ntags = ["admin", "meta"]\n')
    out = tmp_path / "pkg"
    generate(spec(), out, "pyproject-api", "--config", str(pyproject), "--no-verify")
    assert "GET /health" not in manifest(out)["tools"].values()
    pyproject.write_text('[tool.typed-mcp]\nexclude = {tag = ["x"]}\n')
    proc = run_cli(
        "generate", str(tmp_path / "pyproject-api.openapi.json"), "--out", str(out), "--config", str(pyproject)
    )
    assert one_line_error(proc) == f"error: {pyproject}: tool.typed-mcp.exclude.tag: unknown key"


def test_x_mcp_at_the_three_levels(tmp_path: Path):
    document = spec(**{"x-mcp": {"exclude": True}})  # root: nothing, unless said otherwise below
    document["paths"]["/items"]["x-mcp"] = {"exclude": False}  # path: both /items operations
    document["paths"]["/items"]["post"]["x-mcp"] = {"exclude": True}  # operation beats path
    document["paths"]["/items/{id}"]["x-mcp"] = {"exclude": True}  # path beats root...
    document["paths"]["/items/{id}"]["get"]["x-mcp"] = {"exclude": False}  # ...and operation beats path
    document["paths"]["/report"]["x-mcp"] = {"exclude": False}
    document["paths"]["/health"]["get"]["x-mcp"] = {"exclude": False, "name": "ping", "description": "Is it up?"}
    document["paths"]["/report"]["get"]["x-mcp"] = {"name": "42 -- !"}  # not a tool name: ignored
    out = tmp_path / "pkg"
    proc = generate(document, out, "xmcp-api", "--no-verify")
    assert "warning: GET /report: x-mcp name '42 -- !' is not a usable tool name: ignored" in proc.stderr
    data = manifest(out)
    assert data["tools"] == {
        "list_items": "GET /items",
        "get_item": "GET /items/{id}",
        "ping": "GET /health",
        "get_report": "GET /report",
    }
    rules = {(e["operation"], e["action"]): e["rule"] for e in data["curation"]}
    assert rules[("POST /items", "excluded")] == "x-mcp exclude (operation)"
    assert rules[("DELETE /items/{id}", "excluded")] == "x-mcp exclude (path)"
    assert rules[("GET /admin/stats", "excluded")] == "x-mcp exclude (root)"
    assert rules[("GET /health", "renamed to ping")] == "x-mcp name"
    assert rules[("GET /health", "description replaced")] == "x-mcp description"
    assert "Is it up?" in (out / "src" / "xmcp_api" / "tools" / "ping.py").read_text()


OVERLAY = """overlay: 1.0.0
info: {title: Fix the Curated API, version: "1"}
actions:
  - target: $.paths['/admin/stats']
    remove: true
  - target: $.paths['/health'].get
    update: {x-mcp: {name: ping}}
  - target: $.paths.*[?@.operationId == 'deleteItem']
    update: {x-mcp: {exclude: true}}
  - target: $.components.schemas.Item
    update:
      required: [id]
      properties: {note: {type: string}}
"""


def test_an_overlay_renames_excludes_and_patches_a_schema(tmp_path: Path):
    overlay = tmp_path / "fix.yaml"
    overlay.write_text(OVERLAY)
    out = tmp_path / "pkg"
    generate(spec(), out, "overlay-api", "--overlay", str(overlay), "--no-verify")
    data = manifest(out)
    assert "GET /admin/stats" not in data["tools"].values() and "DELETE /items/{id}" not in data["tools"].values()
    assert data["tools"]["ping"] == "GET /health"
    rules = {(e["operation"], e["action"]): e["rule"] for e in data["curation"]}
    assert rules[("GET /admin/stats", "excluded")] == "overlay fix.yaml actions[0]"
    assert rules[("DELETE /items/{id}", "excluded")] == "x-mcp exclude (operation)"
    assert data["curated_by"] == [{"overlay": "fix.yaml", "sha256": data["curated_by"][0]["sha256"]}]
    model = (out / "src" / "overlay_api" / "models" / "item.py").read_text()
    assert "note: str | None = None" in model and "name: str | None = None" in model
    # The snapshot of the spec is the spec as published, not the patched one.
    assert (
        data["spec"]["sha256"]
        == __import__("hashlib").sha256((tmp_path / "overlay-api.openapi.json").read_bytes()).hexdigest()
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n  - target: $.paths['/gone']\n    remove: true\n",
            "{overlay}: actions[0]: target \"$.paths['/gone']\" selects nothing in the spec",
        ),
        ("overlay: 2.0.0\ninfo: {title: t, version: '1'}\nactions: []\n", "{overlay}: not an Overlay 1.0 document"),
        (
            "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n  - target: paths\n    remove: true\n",
            "{overlay}: #/actions/0: 'target' must be a JSONPath starting with '$'",
        ),
        ("overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions: [\n", "{overlay}: invalid YAML"),
    ],
)
def test_a_bad_overlay_is_one_line_naming_the_file(tmp_path: Path, text: str, expected: str):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(text)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    proc = run_cli("generate", str(spec_file), "--out", str(tmp_path / "pkg"), "--overlay", str(overlay))
    assert proc.returncode == 1
    assert one_line_error(proc).startswith("error: " + expected.format(overlay=overlay)), proc.stderr
    assert not (tmp_path / "pkg").exists()


def test_an_overlay_regex_runs_in_linear_time_and_means_what_i_regexp_means(tmp_path: Path):
    """RFC 9535's match() and search() take I-Regexps (RFC 9485). On the old code python-jsonpath ran
    them with Python's backtracking `re`: `(a+)+!` against a description of thirty-four `a` and a `?`
    did not finish. Here `match` is anchored, `search` is not, and `^`/`$` are plain characters."""
    document = spec()
    document["paths"]["/items"]["get"]["description"] = "a" * 34 + "!"
    document["paths"]["/items"]["post"]["description"] = "a" * 34 + "?"  # `re`: 24 took 2 s, each one more doubles
    document["paths"]["/health"]["get"]["description"] = "costs $5"
    document["paths"]["/report"]["get"]["description"] = "pay 5$ now"
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(document))
    overlay = tmp_path / "fix.yaml"
    overlay.write_text(
        "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n"
        "  - target: $.paths.*[?match(@.description, '(a+)+!')]\n    remove: true\n"  # the whole value
        "  - target: $.paths.*[?search(@.description, '5$')]\n    remove: true\n"  # anywhere in it
        "  - target: $.paths.*[?search(@.description, '[$]5')]\n    update: {x-mcp: {name: dollars}}\n"
    )
    out = tmp_path / "pkg"
    args = [sys.executable, "-m", "typed_mcp", "generate", str(spec_file), "--out", str(out), "--overlay", str(overlay)]
    try:  # generation itself takes about 15 s here
        proc = subprocess.run([*args, "--no-verify"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("generate did not finish within 120 s")
    assert proc.returncode == 0, proc.stderr
    tools = manifest(out)["tools"]
    assert "GET /items" not in tools.values() and "POST /items" in tools.values()  # `?` is no `!`: kept
    # `5$` is a `5` then a `$`, not a `5` at the end; `[$]5` a `$` then a `5`.
    assert "GET /report" not in tools.values() and tools["dollars"] == "GET /health"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("$.paths.*[?search(@.description, '\\\\d')]", "pattern '\\\\d': \\d is no I-Regexp escape"),
        ("$.paths.*[?search(@.description, '(?i)a')]", "pattern '(?i)a': '(?' is no I-Regexp"),
        ("$.paths.*[?match(@.description, 'a{1,999}')]", "more than 256 characters once its repetitions"),
    ],
)
def test_an_overlay_regex_the_linear_engine_cannot_run_is_an_error_naming_the_action(
    tmp_path: Path, target: str, expected: str
):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    overlay = tmp_path / "fix.json"
    actions = [{"target": target, "remove": True}]
    overlay.write_text(json.dumps({"overlay": "1.0.0", "info": {"title": "t", "version": "1"}, "actions": actions}))
    proc = run_cli("generate", str(spec_file), "--out", str(tmp_path / "pkg"), "--overlay", str(overlay))
    assert proc.returncode == 1, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"error: {overlay}: actions[0]: target ") and expected in line, line
    assert not (tmp_path / "pkg").exists()


def test_an_overlay_update_copied_to_every_selected_node_is_bounded(tmp_path: Path):
    from typed_mcp.spec.load import MAX_ALIAS_NODES, load
    from typed_mcp.spec.overlay import apply_overlays

    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    overlay = tmp_path / "big.json"
    update = {"x-blob": list(range(MAX_ALIAS_NODES // 4))}  # copied into each of the spec's eight operations
    action = {"target": "$.paths.*.*", "update": update}
    overlay.write_text(json.dumps({"overlay": "1.0.0", "info": {"title": "t", "version": "1"}, "actions": [action]}))
    with pytest.raises(SpecError, match=f"would add more than {MAX_ALIAS_NODES} nodes"):
        apply_overlays(load(str(spec_file)), (overlay,))


def test_an_overlay_target_that_multiplies_the_nodes_it_visits_stops_at_its_deadline(tmp_path: Path, monkeypatch):
    """Descendant segments chained visit each node once per ancestor per segment: `$..*..*..*..*`
    over a tree of 30,000 nodes and depth 9 is millions of visits, many minutes on the old code."""
    from typed_mcp.spec import overlay as overlays
    from typed_mcp.spec.load import load

    def tree(depth: int) -> dict:
        return {} if depth == 0 else {f"k{n}": tree(depth - 1) for n in range(3)}

    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec(**{"x-tree": tree(9)})))
    overlay = tmp_path / "slow.json"
    action = {"target": "$..*..*..*..*[?@.nothing]", "remove": True}
    overlay.write_text(json.dumps({"overlay": "1.0.0", "info": {"title": "t", "version": "1"}, "actions": [action]}))
    monkeypatch.setattr(overlays, "SECONDS", 2.0, raising=False)
    started = time.monotonic()
    with pytest.raises(SpecError, match=r"slow.json: actions\[0\]: target .* took more than 2 s to evaluate"):
        overlays.apply_overlays(load(str(spec_file)), (overlay,))
    assert time.monotonic() - started < 120  # a hang, not speed: the old evaluation ran for hours


@pytest.mark.long  # half a minute; make test regenerates a curated package byte for byte above
def test_check_regenerates_with_the_same_curation(curated: Path, tmp_path: Path):
    """The drift check is given the same --config: no drift; without it, the curated package drifts."""
    config = curated.parent / "typed-mcp.toml"
    spec_file = curated.parent / "curated-api.openapi.json"
    args = ("check", str(spec_file), "--out", str(curated), "--package-name", "curated-api")
    proc = run_cli(*args, "--config", str(config))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert run_cli(*args).returncode == 1


def test_a_config_lists_overlays_and_defines_a_required_scheme(tmp_path: Path):
    (tmp_path / "fix.yaml").write_text(OVERLAY)
    config = tmp_path / "typed-mcp.toml"
    config.write_text(
        'overlays = ["fix.yaml"]\n\n[auth]\nrequired = true\n\n'
        '[auth.schemes.key]\ntype = "apiKey"\nin = "header"\nname = "X-Api-Key"\n'
    )
    out = tmp_path / "pkg"
    generate(spec(), out, "keyed-api", "--config", str(config), "--no-verify")
    data = manifest(out)
    assert data["tools"]["ping"] == "GET /health"
    assert [source.get("config") or source.get("overlay") for source in data["curated_by"]] == [
        "typed-mcp.toml",
        "fix.yaml",
    ]
    assert {"operation": "*", "action": "auth key added (required)", "rule": "config auth"} in data["curation"]
    tool = (out / "src" / "keyed_api" / "tools" / "ping.py").read_text()
    assert 'security=(("key",),)' in tool
    assert "KEYED_API_KEY_KEY" in (out / "src" / "keyed_api" / "upstream.py").read_text()


def test_the_package_readme_names_the_tools_without_an_output_schema(curated: Path):
    readme = (curated / "README.md").read_text()
    assert "- `get_report`: an answer that does not match its model comes as text" in readme
    assert "- `get_broken`: the JSON as text, not checked" in readme
    assert "fetch_item`:" not in readme


def test_overlay_updates_merge_objects_and_append_to_arrays(tmp_path: Path):
    from typed_mcp.spec.load import load
    from typed_mcp.spec.overlay import apply_overlays

    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec()))
    first, second = tmp_path / "one.yaml", tmp_path / "two.json"
    first.write_text(
        "overlay: 1.0.2\ninfo: {title: t, version: '1'}\nactions:\n"
        "  - target: $.paths['/health'].get.tags\n    update: [public, ops]\n"
        "  - target: $\n    update: {info: {description: patched}}\n"
    )
    second.write_text(
        json.dumps(
            {
                "overlay": "1.0.0",
                "info": {"title": "t", "version": "1"},
                "actions": [{"target": "$.paths['/health'].get.tags[?@ == 'ops']", "remove": True}],
            }
        )
    )
    loaded = load(str(spec_file))
    patched, overlays, removed = apply_overlays(loaded, (first, second))
    assert patched.document["paths"]["/health"]["get"]["tags"] == ["meta", "public"]
    assert patched.document["info"] == {"title": "Curated", "version": "1", "description": "patched"}
    assert [o.path.name for o in overlays] == ["one.yaml", "two.json"] and removed == []
    assert loaded.document["paths"]["/health"]["get"]["tags"] == ["meta"]  # the loaded spec is left as it was
    assert patched.raw == loaded.raw


TOOLSETS_CONFIG = """
[toolsets.reading]                 # every list given must match, as in [include]
tags = ["items"]
methods = ["GET"]
[toolsets.ops]
operations = ["health", "GET /admin/stats"]
[toolsets.items]                   # replaces the tag's toolset of the same name
operations = ["getItem"]
[toolsets.nothing]
paths = ["/nope/*"]
"""


@pytest.mark.anyio
async def test_config_toolsets_are_served_beside_the_tags(tmp_path: Path):
    (tmp_path / "typed-mcp.toml").write_text(TOOLSETS_CONFIG)
    out = tmp_path / "sets-api"
    proc = generate(spec(), out, "sets-api", "--config", str(tmp_path / "typed-mcp.toml"))
    assert "toolsets.nothing: matches no operation" in proc.stderr + proc.stdout
    entries = [e for e in manifest(out)["curation"] if e["action"].startswith("toolset ")]
    assert entries == [
        {"operation": "*", "action": "toolset reading (5 tools)", "rule": "config toolsets.reading"},
        {"operation": "*", "action": "toolset ops (2 tools)", "rule": "config toolsets.ops"},
        {"operation": "*", "action": "toolset items (1 tools)", "rule": "config toolsets.items"},
    ]
    expected = {
        "reading": {"list_items", "get_item", "admin_stats", "get_report", "get_broken"},
        "ops": {"admin_stats", "health"},
        "items": {"get_item"},
        "admin": {"admin_stats"},  # the tags' toolsets stay
    }
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    for toolset, tools in expected.items():
        server = StdioServerParameters(command=sys.executable, args=["-m", "sets_api", "--toolsets", toolset], env=env)
        async with Client(server) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == tools, toolset
    refused = subprocess.run(
        [sys.executable, "-m", "sets_api", "--toolsets", "nothing"], env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "nothing" in refused.stderr and "reading" in refused.stderr


SEARCH_CONFIG = """
[operations.getReport]
keywords = ["quarterly numbers", "earnings"]

[search.synonyms]
item = ["widget", "gizmo", "thing we sell"]
"""


@pytest.mark.anyio
async def test_search_words_from_the_config_and_x_mcp_find_the_tools(tmp_path: Path):
    """Words users say for an operation (config `keywords`, x-mcp `keywords`) and for an API word
    (`[search.synonyms]`, single words and phrases) reach discovery mode's search: requests in those
    words find the tools, through a real discovery server and the SDK client; the record says so."""
    (tmp_path / "typed-mcp.toml").write_text(SEARCH_CONFIG)
    document = spec()
    document["paths"]["/health"]["get"]["x-mcp"] = {"keywords": ["heartbeat", "is it alive"]}
    out = tmp_path / "words-api"
    generate(document, out, "words-api", "--config", str(tmp_path / "typed-mcp.toml"))
    rules = {(e["operation"], e["rule"]) for e in manifest(out)["curation"] if e["action"].startswith("search")}
    assert rules == {
        ("GET /report", "config operations.getReport.keywords"),
        ("GET /health", "x-mcp keywords"),
        ("*", "config search.synonyms"),
    }, rules
    env = {**os.environ, "PYTHONPATH": str(out / "src")}
    server = StdioServerParameters(command=sys.executable, args=["-m", "words_api", "--discovery"], env=env)
    async with Client(server) as client:
        found = {query: await first(client, query, len(tools)) for query, tools in SEARCH_QUERIES.items()}
    assert found == SEARCH_QUERIES, found

    plain = tmp_path / "plain" / "words-api"  # the same spec without those words: none of it is found
    plain.parent.mkdir()
    generate(spec(), plain, "words-api")
    env["PYTHONPATH"] = str(plain / "src")
    async with Client(StdioServerParameters(command=sys.executable, args=server.args, env=env)) as client:
        for query, tools in SEARCH_QUERIES.items():
            assert await first(client, query, len(tools)) != tools, query


SEARCH_QUERIES = {  # query -> the tools it finds first, in any order
    "earnings for last quarter": {"get_report"},
    "heartbeat": {"health"},
    "gizmo": {"list_items", "get_item", "create_item", "delete_item"},
    "thing we sell": {"list_items", "get_item", "create_item", "delete_item"},
}


async def first(client: Client, query: str, count: int) -> set[str]:
    """The names of the first `count` tools `search_tools` finds for `query`."""
    result = await client.call_tool("search_tools", {"query": query, "limit": count})
    assert not result.is_error, result
    return {tool["name"] for tool in result.structured_content["tools"]}
