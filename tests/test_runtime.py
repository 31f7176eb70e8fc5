"""What a tool call does, against a real HTTP server on 127.0.0.1: auth, serialization, content
kinds and every failure mode. The generated package is imported in-process and driven through
the MCP Python SDK client."""

from __future__ import annotations

import email.parser
import email.policy
import json
import logging
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from harness.demo.process import free_port
from support import HttpServer, Reply, generate, import_server

pytestmark = pytest.mark.anyio

OBJ = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def op(op_id: str, security=None, params=None, response=None, media="application/json", **extra) -> dict:
    content = {media: {"schema": response or OBJ}} if media else None
    responses = {"200": {"description": "ok", **({"content": content} if content else {})}}
    return {
        "operationId": op_id,
        "responses": responses,
        **({"security": security} if security is not None else {}),
        **({"parameters": params} if params else {}),
        **extra,
    }


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Echo", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9/api"}],
    "components": {
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer"},
            "basicAuth": {"type": "http", "scheme": "basic"},
            "headerKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
            "cookieKey": {"type": "apiKey", "in": "cookie", "name": "session"},
        },
        # GitHub's `issue-type`: an object schema that is itself nullable.
        "schemas": {
            "Count": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
            "IssueType": {
                "type": "object",
                "nullable": True,
                "required": ["id"],
                "properties": {"id": {"type": "integer"}},
            },
        },
    },
    "paths": {
        "/auth/bearer": {"get": op("bearer", [{"bearerAuth": []}])},
        "/auth/basic": {"get": op("basic", [{"basicAuth": []}])},
        "/auth/header": {"get": op("header", [{"headerKey": []}])},
        "/auth/query": {"get": op("query", [{"queryKey": []}])},
        "/auth/cookie": {"get": op("cookie", [{"cookieKey": []}])},
        "/auth/optional": {"get": op("optional", [{}, {"bearerAuth": []}])},
        "/params/{id}": {
            "get": op(
                "params",
                params=[
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
                    {
                        "name": "ids",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "integer"}},
                        "explode": False,
                    },
                    {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                    {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
                    {"name": "flag", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                    {"name": "pref", "in": "cookie", "schema": {"type": "string"}},
                    # Cloudflare: bounds without a type, and pages typed as numbers.
                    {"name": "page", "in": "query", "schema": {"minimum": 1}},
                    {"name": "per_page", "in": "query", "schema": {"type": "number", "maximum": 100}},
                    {"name": "name", "in": "query", "schema": {"minLength": 2}},
                ],
            )
        },
        "/form": {
            "post": op(
                "submit_form",
                requestBody={
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "n": {"type": "integer"},
                                    "events": {"type": "array", "items": {"type": "string"}},
                                },
                            }
                        }
                    },
                },
            )
        },
        "/upload": {
            "post": op(
                "upload",
                requestBody={
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["file"],
                                "properties": {
                                    "file": {"type": "string", "format": "binary"},
                                    "note": {"type": "string"},
                                    "meta": {
                                        "type": "object",
                                        "properties": {"at": {"type": "string", "format": "date-time"}},
                                    },
                                },
                            }
                        }
                    }
                },
            )
        },
        "/raw": {
            "put": op(
                "put_raw",
                requestBody={
                    "required": True,
                    "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                },
            )
        },
        # Docker's POST /build: an octet-stream body whose real type is given by a Content-Type parameter.
        "/build": {
            "post": op(
                "build",
                params=[
                    {
                        "name": "Content-type",
                        "in": "header",
                        "schema": {"type": "string", "enum": ["application/x-tar"]},
                    }
                ],
                requestBody={
                    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}
                },
            )
        },
        "/files/{id}#copy": {
            "post": op(
                "copy_file", params=[{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
            )
        },
        "/search?kind=user": {
            "get": op(
                "search_users",
                params=[
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                    {"name": "since", "in": "query", "schema": {"type": "string", "format": "date-time"}},
                    {"name": "sid", "in": "query", "schema": {"type": "string", "pattern": "^AC[0-9a-f]{32}$"}},
                    {"name": "sort", "in": "query", "schema": {"type": "string", "format": "x\nevil", "enum": ["a"]}},
                    # OpenAPI 3.1's nullable, as Airflow writes it: the type and format of the non-null branch stay.
                    {"name": "asset_id", "in": "query", "schema": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
                    {
                        "name": "after",
                        "in": "query",
                        "schema": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
                    },
                    # Cloudflare's radar: an array of date-times.
                    {
                        "name": "dateEnd",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "string", "format": "date-time"}},
                    },
                ],
            )
        },
        "/number": {"get": op("number", response={"type": "integer"})},
        # Chroma's list_databases: a list of a model the real answer contradicts.
        "/counts": {
            "get": op(
                "counts",
                response={"type": "array", "items": {"$ref": "#/components/schemas/Count"}},
            )
        },
        # Twilio: relative references under `format: uri`.
        "/links": {
            "get": op(
                "links",
                response={
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": {"type": "string", "format": "uri"}},
                },
            )
        },
        "/issue-type": {
            "get": op("issue_type", response={"$ref": "#/components/schemas/IssueType"}),
            "head": op("issue_type_exists", response={"$ref": "#/components/schemas/IssueType"}),
        },
        # GitHub's PUT .../secrets/{name}: 201 with JSON when created, 204 without a body when updated.
        "/secret": {
            "put": {
                "operationId": "put_secret",
                "responses": {
                    "201": {"description": "created", "content": {"application/json": {"schema": OBJ}}},
                    "204": {"description": "updated"},
                },
            }
        },
        # Zoom: JSON declared on a 204, which HTTP gives no body.
        "/owner": {
            "put": {
                "operationId": "put_owner",
                "responses": {"204": {"description": "updated", "content": {"application/json": {"schema": {}}}}},
            }
        },
        "/anything": {
            "get": {
                "operationId": "anything",
                "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
            }
        },
        "/text": {"get": op("text", media="text/plain", response={"type": "string"})},
        # Kubernetes' connect endpoints: a string under */*.
        "/exec": {"get": op("exec_text", media="*/*", response={"type": "string"})},
        "/image": {"get": op("image", media="image/png", response={"type": "string", "format": "binary"})},
        # Cloudflare's urlscanner screenshot: the image, or a JSON note that it is not ready yet.
        "/screenshot": {
            "get": {
                "operationId": "screenshot",
                "responses": {
                    "200": {"description": "the image", "content": {"image/png": {"schema": {"type": "string"}}}},
                    "202": {"description": "in progress", "content": {"application/json": {"schema": OBJ}}},
                },
            }
        },
        "/blob": {"get": op("blob", media="application/octet-stream", response={"type": "string", "format": "binary"})},
        # Cloudflare files script content under `string`, which is no media type.
        "/script": {"get": op("script", media="string", response={"example": "export default {}"})},
    },
}

PREFIX = "ECHO_API"
SECRET = "sup3r-s3cret-value"


@pytest.fixture(scope="module")
def server_factory(tmp_path_factory):
    out = tmp_path_factory.mktemp("echo") / "echo-api"
    generate(SPEC, out, "echo-api")
    return lambda: import_server(out, "echo_api")


@pytest.fixture
def upstream(monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url + "/api")
        for name in ("bearer", "basic", "header", "query", "cookie", "optional"):
            server.routes[f"/api/auth/{name}"] = Reply(200, {"ok": True})
        server.routes["/api/params/7"] = Reply(200, {"ok": True})
        server.routes["/api/form"] = Reply(200, {"ok": True})
        yield server


async def call(server_factory, name: str, arguments: dict | None = None):
    async with Client(server_factory()) as client:
        return await client.call_tool(name, arguments or {})


@pytest.mark.parametrize(
    ("tool", "env", "check"),
    [
        ("bearer", {"BEARER_AUTH_TOKEN": SECRET}, lambda s: s.headers["authorization"] == f"Bearer {SECRET}"),
        (
            "basic",
            {"BASIC_AUTH_USERNAME": "ann", "BASIC_AUTH_PASSWORD": SECRET},
            lambda s: (
                s.headers["authorization"]
                == "Basic " + __import__("base64").b64encode(f"ann:{SECRET}".encode()).decode()
            ),
        ),
        ("header", {"HEADER_KEY_KEY": SECRET}, lambda s: s.headers["x-api-key"] == SECRET),
        ("query", {"QUERY_KEY_KEY": SECRET}, lambda s: s.raw_path == f"/api/auth/query?api_key={SECRET}"),
        ("cookie", {"COOKIE_KEY_KEY": SECRET}, lambda s: s.headers["cookie"] == f"session={SECRET}"),
    ],
)
async def test_auth_schemes(server_factory, upstream, monkeypatch, tool, env, check):
    # Not configured: the call goes out without it; the API's 401 names the variables to set.
    upstream.routes[f"/api/auth/{tool}"] = Reply(401, {"detail": "unauthorized"})
    missing = await call(server_factory, tool)
    assert missing.is_error and "HTTP 401" in missing.content[0].text
    needed = f"sent without credentials; missing credentials: set {' + '.join(PREFIX + '_' + k for k in env)}"
    assert needed in missing.content[0].text
    sent = upstream.seen[-1]
    assert "authorization" not in sent.headers and "x-api-key" not in sent.headers and "cookie" not in sent.headers
    assert "api_key" not in sent.raw_path
    upstream.routes[f"/api/auth/{tool}"] = Reply(200, {"ok": True})
    for key, value in env.items():
        monkeypatch.setenv(f"{PREFIX}_{key}", value)
    result = await call(server_factory, tool)
    assert not result.is_error, result.content
    assert check(upstream.seen[-1])
    assert SECRET not in result.model_dump_json()  # not even in the provenance URL
    if tool == "query":
        assert result.meta["io.github.typed-mcp/source"]["url"].endswith("?api_key=REDACTED")


async def test_query_credential_never_logged(server_factory, upstream, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(f"{PREFIX}_QUERY_KEY_KEY", SECRET)
    result = await call(server_factory, "query")
    assert not result.is_error and upstream.seen[-1].raw_path.endswith(SECRET)
    assert caplog.records and SECRET not in caplog.text


async def test_optional_auth(server_factory, upstream, monkeypatch):
    assert not (await call(server_factory, "optional")).is_error
    assert "authorization" not in upstream.seen[-1].headers
    monkeypatch.setenv(f"{PREFIX}_BEARER_AUTH_TOKEN", SECRET)
    assert not (await call(server_factory, "optional")).is_error
    assert upstream.seen[-1].headers["authorization"] == f"Bearer {SECRET}"


async def test_parameter_serialization(server_factory, upstream):
    arguments = {
        "id": 7,
        "ids": [1, 2],
        "tags": ["a b", "c"],
        "filter": {"state": "open", "n": 2},
        "flag": True,
        "x_request_id": "r-1",
        "pref": "dark mode",
    }
    result = await call(server_factory, "params", arguments)
    assert not result.is_error, result.content
    seen = upstream.seen[-1]
    assert seen.raw_path == "/api/params/7?ids=1%2C2&tags=a+b&tags=c&filter%5Bstate%5D=open&filter%5Bn%5D=2&flag=true"
    assert seen.headers["x-request-id"] == "r-1"
    assert seen.headers["cookie"] == "pref=dark%20mode"
    result = await call(server_factory, "params", {"id": 7})  # optional arguments left out are not sent
    assert upstream.seen[-1].raw_path == "/api/params/7"
    # Bounds say a typeless parameter is a number; a whole number goes as one (`page=2`, not `2.0`).
    result = await call(server_factory, "params", {"id": 7, "page": 2, "per_page": 2.5, "name": "xy"})
    assert not result.is_error, result.content
    assert upstream.seen[-1].raw_path == "/api/params/7?page=2&per_page=2.5&name=xy"
    refused = await call(server_factory, "params", {"id": 7, "page": "abc"})  # a clean refusal, not a server exception
    assert refused.is_error and "page" in refused.content[0].text
    # A length says a typeless parameter is a string, and the length applies (Cloudflare's variant_id).
    short = await call(server_factory, "params", {"id": 7, "name": "x"})
    assert short.is_error and "name" in short.content[0].text and "(minLength: 2)" in short.content[0].text
    refused = await call(server_factory, "params", {"id": 7, "page": 0})
    assert refused.is_error and "less than the minimum of 1" in refused.content[0].text


async def test_form_body(server_factory, upstream):
    result = await call(server_factory, "submit_form", {"body": {"name": "a&b", "n": 3, "events": ["ringing", "a,b"]}})
    assert not result.is_error, result.content
    seen = upstream.seen[-1]
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    # An array is one pair per item (style form, explode true: OpenAPI's default for form fields).
    assert seen.body == b"name=a%26b&n=3&events=ringing&events=a%2Cb"


async def test_multipart_raw_and_odd_paths(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        for route in ("/upload", "/raw", "/files/a%2Fb", "/search", "/build"):
            server.routes[route] = Reply(200, {"ok": True})
        async with Client(server_factory()) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["put_raw"].input_schema["properties"]["body"]["anyOf"][0] == {"type": "string"}  # or a file
            # A string parameter's format reaches the inputSchema (the value stays a string).
            search = tools["search_users"].input_schema["properties"]
            assert search["since"]["format"] == "date-time" and search["since"]["anyOf"][0] == {"type": "string"}
            assert "format" not in json.dumps(search["sort"])
            assert search["sid"]["pattern"] == "^AC[0-9a-f]{32}$"
            assert search["asset_id"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
            assert (
                search["after"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
                and search["after"]["format"] == "date-time"
            )
            assert search["date_end"]["anyOf"][0]["items"] == {"type": "string", "format": "date-time"}
            upload = await client.call_tool(
                "upload", {"body": {"file": "hello file", "note": "n", "meta": {"at": "2024-01-01T00:00:00Z"}}}
            )
            raw = await client.call_tool("put_raw", {"body": "/9j/4AAQ"})
            bad = await client.call_tool("put_raw", {"body": "not base64!"})
            copied = await client.call_tool("copy_file", {"id": "a/b"})
            found = await client.call_tool("search_users", {"q": "ann", "asset_id": 7})
            built = await client.call_tool("build", {"body": "YWJj"})
            assert "content_type" not in tools["build"].input_schema["properties"]  # never an argument
            assert tools["build"].input_schema["properties"]["body"]["contentMediaType"] == "application/x-tar"
    assert (
        not upload.is_error and not raw.is_error and not copied.is_error and not found.is_error and not built.is_error
    )
    multipart, put, copy, search, build = server.seen
    assert build.headers["content-type"] == "application/x-tar" and build.body == b"abc"
    assert multipart.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert b'name="file"; filename="file"' in multipart.body and b"hello file" in multipart.body
    # What a multipart parser reads: a file part, a text part, an object as a JSON part, in field order.
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"content-type: " + multipart.headers["content-type"].encode() + b"\r\n\r\n" + multipart.body
    )
    parts = [
        (
            p.get_param("name", header="content-disposition"),
            p.get_filename(),
            p.get("content-type"),
            p.get_payload(decode=True),
        )
        for p in message.iter_parts()
    ]
    assert parts == [
        ("file", "file", "application/octet-stream", b"hello file"),
        ("note", None, None, b"n"),
        ("meta", None, "application/json", b'{"at": "2024-01-01T00:00:00+00:00"}'),
    ]
    assert put.headers["content-type"] == "image/jpeg" and put.body == __import__("base64").b64decode("/9j/4AAQ")
    assert bad.is_error and bad.content[0].text == "the request body is not valid base64"
    assert copy.raw_path == "/files/a%2Fb"  # the `#copy` that told two operations apart is not sent
    assert search.raw_path == "/search?kind=user&q=ann&asset_id=7"


async def test_content_kinds(server_factory, monkeypatch):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/text"] = Reply(200, "héllo\nworld", "text/plain; charset=utf-8")
        server.routes["/image"] = Reply(200, png, "image/png")
        server.routes["/blob"] = Reply(200, b"\x00\x01\x02", "application/octet-stream")
        server.routes["/script"] = Reply(200, "export default {}", "application/javascript")
        async with Client(server_factory()) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["text"].output_schema is None and tools["image"].output_schema is None
            text = await client.call_tool("text", {})
            image = await client.call_tool("image", {})
            blob = await client.call_tool("blob", {})
            script = await client.call_tool("script", {})
    assert server.seen[-1].headers.get("accept") != "string"  # an Accept of no media type crashed Prism
    assert script.content[0].type == "resource" and script.content[0].resource.mime_type == "application/javascript"
    assert text.content[0].text == "héllo\nworld"
    assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"
    assert __import__("base64").b64decode(image.content[0].data) == png
    assert blob.content[0].type == "resource" and blob.content[0].resource.blob == "AAEC"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply(500, "<html><body><h1>Internal   Server Error</h1></body></html>", "text/html"),
            "GET /number failed: HTTP 500 Internal Server Error: <html><body><h1>Internal Server Error</h1></body></html>",
        ),
        (Reply(404, {"message": "gone"}), 'GET /number failed: HTTP 404 Not Found: {"message": "gone"}'),
        (Reply(503, b"", ""), "GET /number failed: HTTP 503 Service Unavailable"),
        (Reply(200, b"{not json"), "upstream returned invalid JSON: {not json"),
        (Reply(200, b""), "upstream returned HTTP 200 with an empty body where JSON was promised"),
        (Reply(200, "<html>hi</html>", "text/html"), "upstream returned text/html where JSON was promised"),
        (Reply(200, '"seven"'), "upstream response does not match int: result: Input should be a valid integer"),
        # Strict JSON validation: what a strict client (AJV) would reject is an error here too.
        (Reply(200, '"7"'), "upstream response does not match int: result: Input should be a valid integer"),
        (Reply(200, "7.5"), "upstream response does not match int: result: Input should be a valid integer"),
        (Reply(200, "x" * 5000, "text/plain"), "x" * 100),
    ],
)
async def test_upstream_failures_are_bounded_error_results(server_factory, monkeypatch, reply, expected):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/number"] = reply
        result = await call(server_factory, "number")
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(expected) or expected in text, text
    assert len(text) < 800 and "Traceback" not in text


async def test_a_list_that_does_not_match_names_its_item_model(server_factory, monkeypatch):
    """The error names the list's model in full: a generic's own `__name__` is just `list`."""
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/counts"] = Reply(200, [{"n": 1}, {"m": 2}])
        result = await call(server_factory, "counts")
    assert result.is_error
    assert result.content[0].text == "upstream response does not match list[Count]: result.1.n: Field required"


async def test_a_nullable_response_schema_admits_null_and_head_has_no_body(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        async with Client(server_factory()) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            server.routes["/issue-type"] = Reply(200, b"null")
            empty = await client.call_tool("issue_type", {})
            server.routes["/issue-type"] = Reply(200, {"id": 3, "extra": True})
            found = await client.call_tool("issue_type", {})
            exists = await client.call_tool("issue_type_exists", {})
    # A union with null: wrapped as {"result": ...}, as the SDK's rule says for unions.
    assert tools["issue_type"].output_schema["properties"]["result"]["anyOf"][1] == {"type": "null"}
    assert not empty.is_error and empty.structured_content == {"result": None}
    assert not found.is_error and found.structured_content == {"result": {"id": 3, "extra": True}}
    # HEAD: whatever the spec declares, HTTP sends no body, so there is no outputSchema to promise.
    assert tools["issue_type_exists"].output_schema is None
    assert not exists.is_error and "HTTP 200" in exists.content[0].text


async def answered(server_factory, monkeypatch, *calls: tuple[str, Reply, str]):
    """Each (route, upstream reply, tool) in turn, through one client: the tools listed and the results."""
    results = []
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        async with Client(server_factory()) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for route, reply, tool in calls:
                server.routes[route] = reply
                results.append(await client.call_tool(tool, {}))
    return tools, results


async def test_a_success_declared_without_a_body_is_a_null_result(server_factory, monkeypatch):
    tools, (created, updated, undeclared, owner) = await answered(
        server_factory,
        monkeypatch,
        ("/secret", Reply(201, {"ok": True}), "put_secret"),
        ("/secret", Reply(204, b""), "put_secret"),
        ("/secret", Reply(200, b""), "put_secret"),  # not declared without a body: still an error
        ("/owner", Reply(204, b""), "put_owner"),
    )
    # The tool may answer null (the 204), so its result is `Model | null`, wrapped as unions are.
    assert tools["put_secret"].output_schema["properties"]["result"]["anyOf"][1] == {"type": "null"}
    assert not created.is_error and created.structured_content == {"result": {"ok": True}}
    assert not updated.is_error and updated.structured_content == {"result": None}
    assert (
        "HTTP 204, no content" in updated.content[0].text
        and updated.meta["io.github.typed-mcp/source"]["status"] == 204
    )
    assert undeclared.is_error and "empty body where JSON was promised" in undeclared.content[0].text
    # A 204 has no body whatever the spec declares: no outputSchema promised.
    assert tools["put_owner"].output_schema is None
    assert not owner.is_error and "HTTP 204" in owner.content[0].text


async def test_a_string_under_any_media_type_may_come_as_text(server_factory, monkeypatch):
    _, (as_text, as_json, broken) = await answered(
        server_factory,
        monkeypatch,
        ("/exec", Reply(200, "total 0\n", "text/plain"), "exec_text"),
        ("/exec", Reply(200, '"quoted"', "application/json"), "exec_text"),
        ("/exec", Reply(200, "not json", "application/json"), "exec_text"),
    )
    assert not as_text.is_error and as_text.structured_content == {"result": "total 0\n"}
    assert not as_json.is_error and as_json.structured_content == {"result": "quoted"}
    assert broken.is_error and "invalid JSON" in broken.content[0].text


async def test_a_uri_may_be_a_relative_reference(server_factory, monkeypatch):
    """Real APIs put relative references under `format: uri`; a URL type refused them all."""
    tools, (result, absolute, broken) = await answered(
        server_factory,
        monkeypatch,
        ("/links", Reply(200, {"uri": "/2010-04-01/Accounts.json"}), "links"),
        ("/links", Reply(200, {"uri": "https://api.example.com/a?b=c#d"}), "links"),
        ("/links", Reply(200, {"uri": "has spaces"}), "links"),  # no URI reference at all: AJV refuses it too
    )
    assert tools["links"].output_schema["properties"]["uri"] == {"type": "string", "format": "uri-reference"}
    assert not result.is_error and result.structured_content == {"uri": "/2010-04-01/Accounts.json"}
    assert not absolute.is_error and broken.is_error and "uri-reference" in broken.content[0].text


async def test_json_without_a_schema_is_any_json_wrapped(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/anything"] = Reply(200, {"free": ["form", 1, None]})
        async with Client(server_factory()) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "anything")
            result = await client.call_tool("anything", {})
    assert tool.output_schema["required"] == ["result"] and tool.output_schema["type"] == "object"
    assert result.structured_content == {"result": {"free": ["form", 1, None]}}
    # Cloudflare's TUS upload start answers 200 without a body: nothing was promised about it.
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/anything"] = Reply(200, b"", "application/json")
        empty = await call(server_factory, "anything")
    assert not empty.is_error and empty.structured_content == {"result": None}


async def test_an_image_with_a_json_note_beside_it(server_factory, monkeypatch):
    """A 200 image and a 202 JSON note: the tool is the image's (asked for first), and the note
    comes as text; asking for the image alone, Prism refused the call (406)."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(8))
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/screenshot"] = Reply(200, png, "image/png")
        image = await call(server_factory, "screenshot")
        assert server.seen[-1].headers.get("accept") == "image/png, application/json;q=0.5"
        server.routes["/screenshot"] = Reply(202, {"message": "In Progress"})
        note = await call(server_factory, "screenshot")
    assert not image.is_error and image.content[0].type == "image" and image.structured_content is None
    assert not note.is_error and json.loads(note.content[0].text) == {"message": "In Progress"}


async def test_valid_scalar_is_wrapped(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/number"] = Reply(200, b"42")
        result = await call(server_factory, "number")
        assert not result.is_error and result.structured_content == {"result": 42}
        # JSON Schema (and AJV) count 22.0 as an integer: so does the server; the body is passed on as it came.
        server.routes["/number"] = Reply(200, b"22.0")
        result = await call(server_factory, "number")
        assert not result.is_error and result.structured_content == {"result": 22.0}
        assert result.content[0].text == '{"result": 22.0}'
        server.routes["/number"] = Reply(200, b"22.5")
        result = await call(server_factory, "number")
        assert result.is_error and "Input should be a valid integer" in result.content[0].text


async def test_timeout_refused_and_size_cap(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        monkeypatch.setenv(f"{PREFIX}_TIMEOUT", "0.5")
        server.routes["/number"] = Reply(200, b"1", delay=2.0)
        result = await call(server_factory, "number")
        assert result.is_error and result.content[0].text == "upstream GET timed out after 0.5s"
        monkeypatch.setenv(f"{PREFIX}_TIMEOUT", "10")
        monkeypatch.setenv(f"{PREFIX}_MAX_RESPONSE_BYTES", "100")
        server.routes["/number"] = Reply(200, b"1" * 101)
        result = await call(server_factory, "number")
        assert result.is_error and "over the 100 byte cap" in result.content[0].text
    port = free_port()
    monkeypatch.setenv(f"{PREFIX}_BASE_URL", f"http://127.0.0.1:{port}")
    result = await call(server_factory, "number")
    assert (
        result.is_error
        and result.content[0].text == f"could not connect to the upstream API at http://127.0.0.1:{port}"
    )


async def test_no_base_url_configured(server_factory, monkeypatch, tmp_path: Path):
    spec = json.loads(json.dumps(SPEC))
    del spec["servers"]
    out = tmp_path / "nobase"
    generate(spec, out, "no-base")
    async with Client(import_server(out, "no_base")) as client:
        result = await client.call_tool("number", {})
    assert result.is_error and "set NO_BASE_BASE_URL or pass --base-url" in result.content[0].text


async def test_a_slow_call_does_not_block_others(server_factory, monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        server.routes["/slow/number"] = Reply(200, b"1", delay=2.0)
        server.routes["/number"] = Reply(200, b"2")
        finished: dict[str, float] = {}
        async with Client(server_factory()) as client:
            start = time.monotonic()

            async def slow():
                monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url + "/slow")
                await client.call_tool("number", {})
                finished["slow"] = time.monotonic() - start

            async def fast():
                await anyio.sleep(0.2)
                monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
                for _ in range(5):
                    assert not (await client.call_tool("number", {})).is_error
                finished["fast"] = time.monotonic() - start

            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                group.start_soon(fast)
    assert finished["fast"] < 1.5 < finished["slow"]
