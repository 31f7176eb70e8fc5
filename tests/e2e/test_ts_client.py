"""Generated servers under a strict client and a real upstream: the official TypeScript MCP SDK's
`Client.callTool` (AJV-validates structuredContent against each tool's outputSchema) against the
committed weather package on the live demo API, and against a package generated from a corpus
spec served by a Prism mock that reports every request that does not match the spec. The weather
package goes through every strict client (`STRICT_CLIENTS`: the 1.x line, and the 2.x line on both
protocol revisions; the 2.x line on the older one in make test-long), over stdio and streamable HTTP.

Needs Node.js and npm: tests/node is installed with `npm ci` (see tests/harness/node_tools.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from harness.arguments import synthesize, synthesize_arguments, synthesize_calls
from harness.demo.process import demo_api, free_port, running
from harness.node_tools import (
    CONTROL_SERVER,
    INVALID_PARAMS,
    INVALID_REQUEST,
    STRICT_CLIENT_PARAMS,
    TS1,
    TS2,
    TS2_MODERN,
    StrictClient,
    prism,
    run_ts_client,
)
from support import CORPUS, REPO, WEATHER_TOOLS, HttpServer, Reply, Seen, generate, run_cli
from support import LONDON_REPORT as REPORT

pytestmark = pytest.mark.needs("node")

WEATHER = REPO / "generated" / "weather-mcp"
TOKEN_ENV = "WEATHER_MCP_HTTP_BEARER_TOKEN"
WEATHER_CALLS = [
    {"name": "get_temperature", "arguments": {"city": "London"}},
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}},
    {"name": "get_temperatures", "arguments": {"cities": ["London", "Paris"]}},
    {"name": "create_report", "arguments": {"body": REPORT}},
    {"name": "delete_report", "arguments": {"report_id": 1}},
]
PETSTORE = CORPUS / "oai__v3.0-petstore-expanded.yaml"


def weather_server(base: str) -> tuple[list[str], dict[str, str]]:
    return (
        [sys.executable, "-m", "weather_mcp", "--base-url", base],
        {"PYTHONPATH": str(WEATHER / "src"), TOKEN_ENV: "demo-token"},
    )


def by_name(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    results = {r["name"]: r for r in run["results"]}
    assert len(results) == len(run["results"]), "a tool was called twice"
    return results


def assert_strict_ok(run: dict[str, Any], names: list[str]) -> None:
    """Every call returned (no McpError from the SDK's outputSchema checks) and none is an error."""
    assert [r["name"] for r in run["results"]] == names
    strict = [
        (r["name"], r["errorCode"], r["error"])
        for r in run["results"]
        if r["errorCode"] in (INVALID_PARAMS, INVALID_REQUEST)
    ]
    assert strict == [], f"the TypeScript SDK rejected results: {strict}"
    failed = [
        (r["name"], r["errorType"], r["errorCode"], r["error"], r["text"])
        for r in run["results"]
        if not r["ok"] or r["isError"]
    ]
    assert failed == [], failed


async def python_client_results(base: str, calls: list[dict[str, Any]]) -> list[Any]:
    """The same calls through the MCP Python SDK client: their structuredContent, in order."""
    command, env = weather_server(base)
    params = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, **env})
    out = []
    async with Client(params) as client:
        for call in calls:
            result = await client.call_tool(call["name"], call["arguments"])
            assert not result.is_error, (call, result.content)
            out.append(result.structured_content)
    return out


# --- the strict client itself --------------------------------------------------------------------


NODE_CONTROL = ["node", str(CONTROL_SERVER)]  # the 1.x SDK's server: the initialize handshake only
PYTHON_CONTROL = [sys.executable, "-m", "harness.control_server"]  # the same tools, on both protocol eras


@pytest.mark.parametrize(
    ("client", "server"),
    [(TS1, NODE_CONTROL), (TS2, NODE_CONTROL), (TS2_MODERN, PYTHON_CONTROL)],
    ids=lambda value: value.id if isinstance(value, StrictClient) else value[-1].rsplit("/", 1)[-1],
)
def test_ts_client_reports_what_it_must(client, server):
    """Negative control: a server that breaks its outputSchemas (tools split over two tools/list
    pages) gets exactly the SDK's errors, per call, without ending the run, in every line and on
    every revision (a 2.x client that stopped validating on 2026-07-28 would pass everything)."""
    names = ["good_int", "wrong_type", "closed_extra", "no_structured", "tool_error", "plain", "missing_tool"]
    env = {"PYTHONPATH": str(REPO / "tests")}
    run = run_ts_client(server, env, [{"name": n, "arguments": {}} for n in names], client=client)
    assert (run["line"], run["protocol"]) == (client.line, client.protocol)
    assert run["tools"] == 6 and run["listed_bytes"] > 500
    got = {r["name"]: (r["ok"], r["isError"], r["errorCode"]) for r in run["results"]}
    assert got == {
        "good_int": (True, False, None),
        "wrong_type": (False, False, INVALID_PARAMS),  # listed on page 1: validated after pagination
        "closed_extra": (False, False, INVALID_PARAMS),
        "no_structured": (False, False, INVALID_REQUEST),
        "tool_error": (True, True, None),
        "plain": (True, False, None),
        "missing_tool": (True, True, None),
    }
    results = by_name(run)
    assert results["good_int"]["structuredContent"] == {"result": 7}
    assert "data/result must be integer" in results["wrong_type"]["error"]
    assert "must NOT have additional properties" in results["closed_extra"]["error"]
    assert "did not return structured content" in results["no_structured"]["error"]


# --- a) the committed weather package on the demo API --------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("client", STRICT_CLIENT_PARAMS)
async def test_weather_package_passes_the_typescript_client(client):
    with demo_api() as base:
        command, env = weather_server(base)
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True, compile_schemas=True, client=client)
        run = run_ts_client(command, env, WEATHER_CALLS, client=client)
    assert listed["schemas"] == {"compiled": 25, "failures": []}  # the line's own AJV: 13 inputs, 12 outputs
    assert listed["tools"] == len(WEATHER_TOOLS) and run["tools"] == len(WEATHER_TOOLS)
    assert run["listed_bytes"] == listed["listed_bytes"] > 1000
    tools = {t["name"]: t for t in listed["tool_list"]}
    assert set(tools) == set(WEATHER_TOOLS)
    assert {name for name, t in tools.items() if t.get("outputSchema")} == set(WEATHER_TOOLS) - {"delete_report"}

    assert_strict_ok(run, [c["name"] for c in WEATHER_CALLS])
    got = {r["name"]: r["structuredContent"] for r in run["results"]}
    assert got["get_temperature"] == {"result": 22}
    assert got["get_weather"] == {"temperature": 19.0, "humidity": 60.0, "conditions": "cloudy"}
    assert got["get_forecast"] == {
        "result": [
            {"temperature": 27.0, "humidity": 70.0, "conditions": "humid"},
            {"temperature": 28.0, "humidity": 70.0, "conditions": "humid"},
        ]
    }
    assert got["get_temperatures"] == {"London": 22.5, "Paris": 19.0}
    created = got["create_report"]
    assert created["id"] == 1 and created["observed_at"] == "2026-11-30T09:00:00Z"
    assert {k: created[k] for k in REPORT} == REPORT and "station" not in created
    assert isinstance(created["received_at"], str)
    assert got["delete_report"] is None  # 204: no outputSchema, no structuredContent
    assert "204" in by_name(run)["delete_report"]["text"]

    if client != TS1:
        return  # the Python SDK client's side, once
    # The Python SDK client sees the same structuredContent (a fresh API: the report is id 1 again).
    with demo_api() as base:
        python = await python_client_results(base, WEATHER_CALLS)
    for call, ts_value, py_value in zip(
        WEATHER_CALLS, [r["structuredContent"] for r in run["results"]], python, strict=True
    ):
        if call["name"] == "create_report":
            ts_value, py_value = dict(ts_value), dict(py_value)
            assert ts_value.pop("received_at") and py_value.pop("received_at")  # a timestamp: differs
        assert ts_value == py_value, call["name"]


@pytest.mark.parametrize("client", STRICT_CLIENT_PARAMS)
def test_weather_package_over_streamable_http(client):
    """The same package served over streamable HTTP, for the SDK's StreamableHTTPClientTransport
    (on 2026-07-28: one self-contained POST per request, no session)."""
    with demo_api() as base:
        command, env = weather_server(base)
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        with running(
            [*command, "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)], url, env
        ):
            run = run_ts_client(None, {}, WEATHER_CALLS[:4], url=url, client=client)
    assert run["tools"] == len(WEATHER_TOOLS) and run["protocol"] == client.protocol
    assert_strict_ok(run, [c["name"] for c in WEATHER_CALLS[:4]])
    assert [r["structuredContent"] for r in run["results"]][:2] == [
        {"result": 22},
        {"temperature": 19.0, "humidity": 60.0, "conditions": "cloudy"},
    ]


# --- b) upstream drift ----------------------------------------------------------------------------


def test_extra_fields_pass_the_typescript_client():
    """Undeclared fields at the top level and nested (uv_index, wind{...}) in an object and in a
    list of objects: open schemas, so the strict client accepts them and they arrive intact."""
    calls = [
        {"name": "get_weather", "arguments": {"city": "London"}},
        {"name": "get_forecast", "arguments": {"city": "Sydney", "days": 3}},
    ]
    with demo_api(env={"WEATHER_DEMO_DRIFT": "extra"}) as base:
        run = run_ts_client(*weather_server(base), calls)
    assert_strict_ok(run, ["get_weather", "get_forecast"])
    extra = {"uv_index": 5, "wind": {"speed_kmh": 12.5, "direction": "NW"}}
    weather, forecast = (r["structuredContent"] for r in run["results"])
    assert weather == {"temperature": 22.5, "humidity": 45.0, "conditions": "sunny", **extra}
    assert forecast == {
        "result": [{"temperature": 15.5 + day, "humidity": 55.0, "conditions": "rain", **extra} for day in range(3)]
    }


def test_missing_field_is_a_tool_error_not_a_schema_violation():
    """A required field missing upstream: the server reports an error result; it never sends
    structuredContent that the strict client would reject."""
    calls = [
        {"name": "get_weather", "arguments": {"city": "London"}},
        {"name": "get_forecast", "arguments": {"city": "Paris", "days": 1}},
    ]
    with demo_api(env={"WEATHER_DEMO_DRIFT": "missing"}) as base:
        run = run_ts_client(*weather_server(base), calls)
    for result in run["results"]:
        assert (result["ok"], result["isError"], result["errorCode"], result["structuredContent"]) == (
            True,
            True,
            None,
            None,
        ), result
        assert "humidity" in result["text"]


# --- c) a corpus spec on a Prism mock ---------------------------------------------------------------


def test_synthesize():
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "integer", "minimum": 5}, {"type": "null"}]},
            "b": {"$ref": "#/$defs/B"},
            "c": {"type": "array", "items": {"enum": ["x", "y"]}},
        },
        "required": ["b"],
        "$defs": {
            "B": {
                "type": "object",
                "properties": {"when": {"type": "string", "format": "date-time"}, "ok": {"type": "boolean"}},
            }
        },
    }
    assert synthesize(schema, schema) == {"a": 5, "b": {"when": "2026-11-30T09:00:00Z", "ok": True}, "c": ["x"]}
    sid = {"type": "string", "pattern": "^AC[0-9a-f]{32}$"}
    assert __import__("re").fullmatch("AC[0-9a-f]{32}", synthesize(sid, sid))
    # A parameter travels as text: for `oneOf [integer, string]` (GitHub's workflow_id) only a
    # non-numeric string is one branch on the wire; a body keeps its JSON types.
    either = {"oneOf": [{"type": "integer"}, {"type": "string"}]}
    tool = {
        "type": "object",
        "properties": {"workflow_id": either, "body": {"type": "object", "properties": {"id": either}}},
    }
    assert synthesize_arguments(tool) == {"workflow_id": "abc", "body": {"id": 1}}
    published = {
        "type": "object",
        "properties": {"workflow_id": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
    }  # pydantic's `int | str`
    assert synthesize_arguments(published) == {"workflow_id": "abc"}


def test_synthesize_tells_union_branches_apart_and_counts_properties():
    # Box's taxonomy sources, deep in a body: `{}` matched both branches of the spec's oneOf; a
    # property that holds one value only (here optional, as pydantic publishes it) is sent too.
    tagged = {
        "type": "object",
        "properties": {
            "type": {"anyOf": [{"const": "file", "type": "string"}, {"type": "null"}], "default": None},
            "id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
    }
    deep = {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "required": ["b"],
                "properties": {"b": {"type": "array", "items": {"$ref": "#/$defs/Tagged"}}},
            }
        },
        "$defs": {"Tagged": tagged},
    }
    assert synthesize(deep, deep) == {"a": {"b": [{"type": "file"}]}}
    # Cloudflare's rule action_parameters: minProperties 1 of optional properties, deep in the body.
    counted = {
        "type": "object",
        "minProperties": 2,
        "maxProperties": 2,
        "properties": {
            "x": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "y": {"type": "string"},
            "z": {"type": "boolean"},
        },
    }
    assert synthesize(counted, counted, depth=5) == {"x": 1, "y": "abc"}
    assert synthesize(counted, counted, depth=0) == {"x": 1, "y": "abc"}  # near the top, cut to maxProperties


@pytest.fixture(scope="module")
def petstore_package(tmp_path_factory) -> Path:
    if not PETSTORE.is_file():
        pytest.skip(f"the shared corpus is absent: {PETSTORE} does not exist")
    out = tmp_path_factory.mktemp("prism") / "pe"
    proc = run_cli("generate", str(PETSTORE), "--out", str(out), "--package-name", "pe", "--no-snapshot")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_corpus_package_against_prism(petstore_package, dynamic):
    env = {"PYTHONPATH": str(petstore_package / "src")}
    with prism(PETSTORE, dynamic=dynamic) as base:
        command = [sys.executable, "-m", "pe", "--base-url", base]
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True)
        calls = synthesize_calls(listed["tool_list"])
        run = run_ts_client(command, env, calls)
        base.settle()
        served = base.requests()
        violations = base.violations("request")
        errors = base.errors()
        log = base.log()

        # The violation parser itself: a request Prism must reject shows up as one violation.
        assert httpx.get(f"{base}/pets", params={"limit": "abc"}).status_code == 422
        base.settle()
        control = base.violations("request")[len(violations) :]
        assert [(v["severity"], v["location"]) for v in control] == [("error", "request.query.limit")], base.log()[
            -3000:
        ]

    assert listed["tools"] == run["tools"] == 4
    assert [c["name"] for c in calls] == ["find_pets", "add_pet", "find_pet_by_id", "delete_pet"]
    assert calls[0]["arguments"] == {"tags": ["abc"], "limit": 1}
    assert calls[1]["arguments"] == {"body": {"name": "abc", "tag": "abc"}}
    assert violations == [], f"Prism reported request violations:\n{log[-6000:]}"
    assert errors == [], errors
    assert served == [("GET", "/pets"), ("POST", "/pets"), ("GET", "/pets/1"), ("DELETE", "/pets/1")], log[-4000:]
    assert_strict_ok(run, ["find_pets", "add_pet", "find_pet_by_id", "delete_pet"])
    results = by_name(run)
    pets = results["find_pets"]["structuredContent"]["result"]
    assert isinstance(pets, list) and all(isinstance(p["id"], int) and isinstance(p["name"], str) for p in pets)
    for name in ("add_pet", "find_pet_by_id"):
        pet = results[name]["structuredContent"]
        assert isinstance(pet["id"], int) and isinstance(pet["name"], str), pet
    assert results["delete_pet"]["structuredContent"] is None and "204" in results["delete_pet"]["text"]
    if not dynamic:  # static mode: Prism's schema-derived example, always the same
        assert pets == [{"name": "string", "tag": "string", "id": -9007199254740991}]


def test_prism_violation_lines_in_both_spellings():
    from harness.node_tools import prism_violations

    log = "\n".join(
        [
            "[6:10:21 AM] ›     [VALIDATOR] ⚠  warning   Request did not pass the validation rules",  # a summary, not a violation
            '[6:10:21 AM] ›     [VALIDATOR] ✖  error     Request path parameter sid must match pattern "^AC[0-9a-fA-F]{32}$"',
            "[6:10:21 AM] ›     [VALIDATOR] ✖  error     Violation: request.query.limit Request query parameter limit must be integer",
            "[6:10:21 AM] ›     [VALIDATOR] ✔  success   The request passed the validation rules. Looking for the best response",
            "[6:10:21 AM] ›     [VALIDATOR] ⚠  warning   Violation: response.body Response body must have required property 'id'",
        ]
    )
    assert [(v["location"], v["message"][:30]) for v in prism_violations(log)] == [
        ("request", "Request path parameter sid mus"),
        ("request.query.limit", "Request query parameter limit "),
    ]
    assert [v["location"] for v in prism_violations(log, "response")] == ["response.body"]


EMAIL_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Mail", "version": "1"},
    "paths": {
        "/me/{n}": {
            "get": {
                "operationId": "getMe",
                "parameters": [{"name": "n", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}},
                    }
                },
            }
        },
        "/emails/{n}": {
            "get": {
                "operationId": "listEmails",
                "parameters": [{"name": "n", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"type": "string", "format": "email"}}
                            }
                        },
                    }
                },
            }
        },
        "/invite": {
            "post": {
                "operationId": "invite",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}},
                },
                "responses": {"204": {"description": "ok"}},
            }
        },
    },
    "components": {
        "schemas": {
            "User": {
                "type": "object",
                "required": ["email"],
                "properties": {
                    "email": {"type": "string", "format": "email"},
                    "backup": {"type": "string", "format": "email", "nullable": True},
                },
            }
        }
    },
}


ADDRESSES = [  # (address, whether the strict client's AJV accepts it)
    ("ann@example.com", True),
    ("a.b+c@mail.example.co", True),
    ("ann@localhost", False),  # AJV's `email` wants a dot in the domain
    ("ännä@example.com", False),
    ("ann@example.com\n", False),
    ('"ann smith"@example.com', False),
    ("abc", False),
]


def test_email_format_is_kept_and_checked_as_strict_clients_do(tmp_path):
    """`format: email` stays in the schemas (inputs and outputs), and the server accepts an email
    exactly when the strict client's AJV would: what it passes on, the client never refuses. One
    client session calls every tool once per address (address n at /me/n and /emails/n)."""
    out = tmp_path / "mail"
    generate(EMAIL_SPEC, out, "mail-mcp")
    invited: list[str] = []

    def invite(seen: Seen) -> Reply:
        invited.append(json.loads(seen.body)["email"])
        return Reply(204)

    with HttpServer() as upstream:
        for n, (address, _) in enumerate(ADDRESSES):
            upstream.routes[f"/me/{n}"] = Reply(200, {"email": address, "backup": None})
            upstream.routes[f"/emails/{n}"] = Reply(200, [address])
        upstream.routes["/invite"] = invite
        command = [sys.executable, "-m", "mail_mcp", "--base-url", upstream.url]
        calls = [
            call
            for n, (address, _) in enumerate(ADDRESSES)
            for call in (
                {"name": "get_me", "arguments": {"n": n}},
                {"name": "list_emails", "arguments": {"n": n}},
                {"name": "invite", "arguments": {"body": {"email": address}}},
            )
        ]
        run = run_ts_client(command, {"PYTHONPATH": str(out / "src")}, calls, dump_tools=True)
    tools = {t["name"]: t for t in run["tool_list"]}
    assert tools["get_me"]["outputSchema"]["properties"]["email"] == {"format": "email", "type": "string"}
    assert tools["list_emails"]["outputSchema"]["properties"]["result"]["items"] == {
        "format": "email",
        "type": "string",
    }
    assert tools["invite"]["inputSchema"]["$defs"]["User"]["properties"]["email"]["format"] == "email"
    results = run["results"]
    assert [r["name"] for r in results] == [c["name"] for c in calls]
    assert all(r["ok"] and r["errorCode"] is None for r in results), results  # never a -32602
    for n, (address, accepted) in enumerate(ADDRESSES):
        for result in results[3 * n : 3 * n + 3]:
            assert result["isError"] is (not accepted), (address, result["name"], result["text"])
        if not accepted:
            assert "email" in results[3 * n]["text"], address
    # An invalid email argument never reaches the upstream API.
    assert invited == [address for address, accepted in ADDRESSES if accepted]


def test_synthesize_prefers_a_value_that_matches_one_oneof_branch():
    schema = {
        "type": "object",
        "required": ["body"],
        "properties": {"body": {"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}},
        "$defs": {
            "A": {
                "type": "object",
                "required": ["x"],
                "properties": {"x": {"type": "string"}, "z": {"type": "string"}},
            },
            "B": {"type": "object", "required": ["z"], "properties": {"z": {"type": "string"}}},
        },
    }
    # Filling A's optional `z` would match B too; A with its required `x` only matches A alone.
    assert synthesize(schema, schema) == {"body": {"x": "abc"}}


def test_a_violation_logged_both_ways_counts_once():
    from harness.node_tools import prism_violations

    log = "\n".join(
        [
            "[7:09:11 AM] ›     [VALIDATOR] ✖  error     Request query parameter limit must be integer",
            "[7:09:11 AM] ›     [VALIDATOR] ✖  error     Violation: request.query.limit Request query parameter limit must be integer",
        ]
    )
    assert [v["location"] for v in prism_violations(log)] == ["request.query.limit"]


def test_an_idle_http_connection_outlives_a_clients_pause():
    """A kept-alive connection stays open across a pause of a few seconds. The 1.x client compiles a
    page's outputSchemas synchronously before it asks for the next page (Cloudflare: many seconds),
    and then sends on the connection it had: with uvicorn's default keep-alive of 5 s the server had
    closed it, and the listing failed with `fetch failed (UND_ERR_SOCKET: other side closed)`."""
    import http.client
    import time

    port = free_port()
    command, env = weather_server("http://127.0.0.1:9")
    args = [*command, "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)]
    with running(args, f"http://127.0.0.1:{port}/health", env):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/health")
        first = connection.getresponse()
        assert first.status == 200 and first.read()  # the whole answer, so the connection is reusable
        socket_before = connection.sock
        time.sleep(6)  # longer than uvicorn's default keep-alive
        # On a connection the server closed, http.client raises RemoteDisconnected here.
        connection.request("GET", "/health")
        second = connection.getresponse()
        assert second.status == 200 and second.read() and connection.sock is socket_before
        connection.close()
