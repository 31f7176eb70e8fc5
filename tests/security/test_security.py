"""The holes of the "Security" issue, each through a real generated server and a real upstream on
127.0.0.1 (or the real CLI): what a hostile upstream, spec or caller could do, and the defence."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import tracemalloc
import zlib

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from support import HttpServer, Reply, generate, generated_copy, import_server, run_cli

pytestmark = pytest.mark.anyio

PREFIX = "GUARDED"


def _op(op_id: str, media: str = "application/json", schema: dict | None = None, **extra) -> dict:
    schema = schema or {"type": "object"}
    return {
        "operationId": op_id,
        "responses": {"200": {"description": "ok", "content": {media: {"schema": schema}}}},
        **extra,
    }


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Guarded", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9/v1"}],
    "components": {
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer"},
            "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
            "machine": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {}}}},
        }
    },
    "paths": {
        "/text": {"get": _op("get_text", "text/plain", {"type": "string"})},
        "/secure": {"get": _op("get_secure", security=[{"bearerAuth": []}])},
        "/keyed": {"get": _op("get_keyed", security=[{"queryKey": []}])},
        "/machine": {"get": _op("get_machine", security=[{"machine": []}])},
        "/repos/{owner}/issues": {
            "get": _op(
                "list_issues",
                parameters=[
                    {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                ],
            )
        },
        "/headers": {
            "get": _op(
                "send_headers",
                parameters=[
                    {"name": name, "in": "header", "schema": {"type": "string"}}
                    for name in ("Host", "Content-Length", "Transfer-Encoding", "Connection", "TE", "Upgrade")
                    + ("Keep-Alive", "Trailer", "Proxy-Authorization", "Proxy-Connection", "X-Note")
                ],
            )
        },
        "/tags/{tags}": {
            "get": _op(
                "get_tags",
                parameters=[
                    {
                        "name": "tags",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "array", "items": {"type": "string"}},
                    },
                ],
            )
        },
    },
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("guarded") / "guarded"
    return out, generate(SPEC, out, "guarded")


@pytest.fixture(scope="module")
def server_factory(generated):
    return lambda: import_server(generated[0], "guarded")


@pytest.fixture
def upstream(monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url + "/v1")
        yield server


async def call(server_factory, name: str, arguments: dict | None = None):
    async with Client(server_factory()) as client:
        return await client.call_tool(name, arguments or {})


# -- 1. decompression bomb -----------------------------------------------------------------------


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


def _brotli(data: bytes) -> bytes:
    return importlib.import_module("brotli").compress(data)


def _zstd(data: bytes) -> bytes:
    try:
        zstd = importlib.import_module("compression.zstd")  # Python 3.14
    except ImportError:
        zstd = importlib.import_module("backports.zstd")
    return zstd.compress(data)


ENCODINGS = [
    pytest.param("gzip", lambda d: gzip.compress(d, 9), id="gzip"),
    pytest.param("deflate", _deflate, id="deflate"),
    pytest.param("br", _brotli, id="br"),  # the dev dependencies install brotli and backports.zstd
    pytest.param("zstd", _zstd, id="zstd"),
]


@pytest.mark.parametrize(("encoding", "compress"), ENCODINGS)
async def test_hole_decompression_bomb_cap_counts_decoded_bytes(
    server_factory, upstream, monkeypatch, encoding, compress
):
    monkeypatch.setenv(f"{PREFIX}_MAX_RESPONSE_BYTES", "1000000")
    bomb = compress(b"a" * 20_000_000)  # 20 MB of text in a few KB on the wire
    assert len(bomb) < 100_000
    upstream.routes["/v1/text"] = Reply(200, bomb, "text/plain", headers={"content-encoding": encoding})
    result = await call(server_factory, "get_text")
    assert result.is_error and "over the 1000000 byte cap" in result.content[0].text
    # Under the cap, the decoded body arrives as it was sent.
    upstream.routes["/v1/text"] = Reply(200, compress(b"hello"), "text/plain", headers={"content-encoding": encoding})
    result = await call(server_factory, "get_text")
    assert not result.is_error and result.content[0].text == "hello"


async def test_hole_decompression_bomb_one_small_read_never_expands_in_memory(server_factory, upstream, monkeypatch):
    """48 KB of gzip is 50 MB of text: arriving in one network read, it is still never held whole."""
    monkeypatch.setenv(f"{PREFIX}_MAX_RESPONSE_BYTES", "1000000")
    bomb = gzip.compress(b"a" * 50_000_000, 9)
    assert len(bomb) < 64 * 1024
    upstream.routes["/v1/text"] = Reply(200, bomb, "text/plain", headers={"content-encoding": "gzip"})
    async with Client(server_factory()) as client:
        tracemalloc.start()
        try:
            result = await client.call_tool("get_text", {})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert result.is_error and "over the 1000000 byte cap" in result.content[0].text
    assert peak < 20_000_000, peak


# -- 2. path segments -----------------------------------------------------------------------------


async def test_hole_path_segments_reserved_characters_are_encoded(server_factory, upstream):
    upstream.default = Reply(200, {})
    sent = {
        "..;": "..%3B",  # Tomcat/Spring read `..;` as `..`
        "a/b?c#d e%": "a%2Fb%3Fc%23d%20e%25",
        "!$&'()*+,;=:@": "%21%24%26%27%28%29%2A%2B%2C%3B%3D%3A%40",
        "ok-._~9": "ok-._~9",
        "...": "...",
    }
    async with Client(server_factory()) as client:
        for value, encoded in sent.items():
            result = await client.call_tool("list_issues", {"owner": value})
            assert not result.is_error, (value, result.content)
            assert upstream.seen[-1].raw_path == f"/v1/repos/{encoded}/issues"
        # An array keeps OpenAPI's literal separators; its items are encoded.
        assert not (await client.call_tool("get_tags", {"tags": ["a;b", "c"]})).is_error
        assert upstream.seen[-1].raw_path == "/v1/tags/a%3Bb,c"


@pytest.mark.parametrize("value", [".", "..", "%2e", "%2E%2e", ".%2e", "%252e%252E"])
async def test_hole_path_segments_dot_segments_are_refused(server_factory, upstream, value):
    upstream.default = Reply(200, {})
    result = await call(server_factory, "list_issues", {"owner": value})
    assert result.is_error and "path parameter 'owner'" in result.content[0].text
    assert upstream.seen == []  # nothing reached the upstream


# -- 3. dangerous header parameters --------------------------------------------------------------


async def test_hole_dangerous_headers_are_never_arguments_nor_sent(generated, server_factory, upstream):
    out, proc = generated
    upstream.default = Reply(200, {})
    async with Client(server_factory()) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "send_headers")
        assert set(tool.input_schema["properties"]) == {"x_note"}
        result = await client.call_tool("send_headers", {"x_note": "hi", "host": "admin.internal"})
    assert not result.is_error, result.content
    seen = upstream.seen[-1]
    assert seen.headers["host"] == upstream.url.removeprefix("http://") and seen.headers["x-note"] == "hi"
    # Each one left out is reported, with its reason, by the CLI and in the manifest.
    manifest = json.loads((out / "typed-mcp.json").read_text())
    for name in ("Host", "Transfer-Encoding", "TE", "Proxy-Authorization", "Proxy-Connection", "Keep-Alive"):
        note = f"GET /headers: header parameter {name!r} is not sent"
        assert note in proc.stderr and any(n.startswith(note) for n in manifest["notes"])
    assert "'X-Note'" not in proc.stderr


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb", "nul\x00", "esc\x1b", "del\x7f"])
async def test_hole_dangerous_headers_control_characters_are_refused(server_factory, upstream, value):
    upstream.default = Reply(200, {})
    result = await call(server_factory, "send_headers", {"x_note": value})
    assert result.is_error and result.content[0].text.startswith("header parameter 'X-Note' may not contain")
    assert upstream.seen == []


# -- 4. credential fallback -----------------------------------------------------------------------


async def test_hole_credential_fallback_forwarded_mode_never_sends_env_credentials(weather_package, demo_url):
    port = free_port()
    args = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url, "--transport", "streamable-http"]
    args += ["--port", str(port), "--forward-authorization"]
    env = {"PYTHONPATH": str(weather_package / "src"), "WEATHER_MCP_HTTP_BEARER_TOKEN": "operator-env-token"}
    report = {"city": "Paris", "temperature": 18, "humidity": 50, "conditions": "fog"}
    report["observed_at"] = "2026-11-30T08:00:00+01:00"
    with running(args, f"http://127.0.0.1:{port}/health", env):
        async with httpx2.AsyncClient() as http:  # no Authorization header of the client's own
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                result = await client.call_tool("create_report", {"body": report})
    seen = httpx.get(f"{demo_url}/_debug/requests").json()[-1]
    assert seen["authorization"] is None  # neither the client's (it sent none) nor the operator's
    assert result.is_error and "HTTP 401" in result.content[0].text
    assert "operator-env-token" not in result.model_dump_json()


# -- 5. spec fetch redirects -----------------------------------------------------------------------

MINI = {
    "openapi": "3.0.3",
    "info": {"title": "Mini", "version": "1"},
    "paths": {"/ping": {"get": _op("ping")}},
}
TOKEN = "glpat-s3cret-header-value"


def _one_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_hole_spec_redirects_cross_origin_drops_every_header(tmp_path):
    with HttpServer() as first, HttpServer() as other:  # two ports: two origins
        other.routes["/openapi.json"] = Reply(200, MINI)
        first.routes["/moved.json"] = Reply(302, b"", headers={"location": "/openapi.json"})
        first.routes["/openapi.json"] = Reply(302, b"", headers={"location": f"{other.url}/openapi.json"})
        headers = ("-H", f"PRIVATE-TOKEN: {TOKEN}", "-H", "Authorization: Bearer a-token", "-H", "X-Custom: c")
        proc = run_cli("generate", f"{first.url}/moved.json", "--out", str(tmp_path / "o"), "--no-snapshot", *headers)
        assert proc.returncode == 0, proc.stderr
        # The same origin gets the headers; the other origin none of them.
        assert [s.raw_path for s in first.seen] == ["/moved.json", "/openapi.json"]
        assert all(s.headers.get("private-token") == TOKEN for s in first.seen)
        (seen,) = other.seen
        assert not {"private-token", "authorization", "x-custom"} & set(seen.headers)
        # Redirected back to the first origin, the headers stay dropped.
        other.routes["/openapi.json"] = Reply(302, b"", headers={"location": f"{first.url}/final.json"})
        first.routes["/final.json"] = Reply(200, MINI)
        proc = run_cli("generate", f"{first.url}/openapi.json", "--out", str(tmp_path / "p"), "--no-snapshot", *headers)
        assert proc.returncode == 0, proc.stderr
        assert first.seen[-1].raw_path == "/final.json" and "private-token" not in first.seen[-1].headers


def test_hole_spec_redirects_loops_and_bad_bodies_are_one_line(tmp_path):
    with HttpServer() as server:
        server.routes["/loop.json"] = Reply(302, b"", headers={"location": "/loop.json"})
        server.routes["/bad.json"] = Reply(200, b"not gzip at all", headers={"content-encoding": "gzip"})
        loop = run_cli("generate", f"{server.url}/loop.json", "--out", str(tmp_path / "o"), "--no-snapshot")
        bad = run_cli("generate", f"{server.url}/bad.json", "--out", str(tmp_path / "o"), "--no-snapshot")
        assert len([s for s in server.seen if s.raw_path == "/loop.json"]) <= 6 * 3  # bounded, retries included
    assert loop.returncode == 3 and "redirects" in _one_line(loop)
    assert bad.returncode == 3 and "DecodingError" in _one_line(bad)


# -- 6. remote refs --------------------------------------------------------------------------------


def _with_remote_ref(url: str) -> dict:
    spec = json.loads(json.dumps(MINI))
    spec["paths"]["/ping"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {"$ref": url}
    return spec


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "169.254.169.254", "10.0.0.1", "[::1]"])
def test_hole_remote_refs_private_addresses_are_refused(tmp_path, host):
    with HttpServer() as server:
        port = server.url.rsplit(":", 1)[1]
        server.routes["/openapi.json"] = Reply(200, _with_remote_ref(f"http://{host}:{port}/schemas.json#/Ping"))
        server.routes["/schemas.json"] = Reply(200, {"Ping": {"type": "object"}})
        args = ("generate", f"{server.url}/openapi.json", "--no-snapshot", "--allow-remote-refs")
        proc = run_cli(*args, "--out", str(tmp_path / "o"))
        assert proc.returncode == 3 and "--allow-private-refs" in _one_line(proc)
        assert [s.raw_path for s in server.seen] == ["/openapi.json"]  # the ref was never fetched
        if host == "127.0.0.1":
            # With the explicit flag, a loopback ref is fetched (the same cap and timeout as the main fetch).
            proc = run_cli(*args, "--allow-private-refs", "--out", str(tmp_path / "p"))
            assert proc.returncode == 0, proc.stderr
            assert server.seen[-1].raw_path == "/schemas.json"


def test_hole_remote_refs_the_checked_transport_fetches_what_it_allows(monkeypatch):
    """The checking transport is a whole transport: an allowed address is fetched with its redirects,
    status and body (here loopback counts as allowed, to have a server to fetch from)."""
    from typed_mcp.spec import load

    checked = []
    monkeypatch.setattr(load, "public_address", lambda host, port: checked.append((host, port)) or host)
    with HttpServer() as server:
        server.routes["/old.json"] = Reply(302, b"", headers={"location": "/schemas.json"})
        server.routes["/schemas.json"] = Reply(200, {"Ping": {"type": "object"}})
        body, _ = load.fetch(f"{server.url}/old.json", headers={}, timeout=10, max_bytes=1000, public_only=True)
        assert json.loads(body) == {"Ping": {"type": "object"}}
        assert [s.raw_path for s in server.seen] == ["/old.json", "/schemas.json"]
        assert checked and all(host == "127.0.0.1" for host, _ in checked)
        server.routes["/big.json"] = Reply(200, {"x": "y" * 5000})
        with pytest.raises(load.FetchError, match="byte cap"):
            load.fetch(f"{server.url}/big.json", headers={}, timeout=10, max_bytes=1000, public_only=True)


# -- 7. local refs escape --------------------------------------------------------------------------


def test_hole_local_refs_escape_the_spec_folder_is_refused(tmp_path):
    outside = tmp_path / "home" / ".docker"
    outside.mkdir(parents=True)
    (outside / "config.json").write_text(json.dumps({"Secret": {"type": "object", "description": "TOPSECRET-AUTH"}}))
    folder = tmp_path / "project" / "api"
    (folder / "schemas").mkdir(parents=True)
    (folder / "schemas" / "ok.json").write_text(json.dumps({"Ping": {"type": "object"}}))
    (folder / "schemas" / "link.json").symlink_to(outside / "config.json")  # inside by name, outside for real
    for ref, ok in (
        ("schemas/ok.json#/Ping", True),
        ("../../home/.docker/config.json#/Secret", False),
        ("schemas/../../../home/.docker/config.json#/Secret", False),
        ("schemas/link.json#/Secret", False),
        ("%2E%2E/%2E%2E/home/.docker/config.json#/Secret", False),
    ):
        spec = folder / "openapi.json"
        spec.write_text(json.dumps(_with_remote_ref(ref)))
        out = tmp_path / "out"
        proc = run_cli("generate", str(spec), "--out", str(out), "--no-snapshot")
        if ok:
            assert proc.returncode == 0, proc.stderr
            continue
        assert proc.returncode == 1 and "leaves the spec's folder" in _one_line(proc), (ref, proc.stderr)
        assert "TOPSECRET" not in proc.stderr + proc.stdout
        assert not any("TOPSECRET" in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    # A wider root the user names lets the same ref in.
    spec.write_text(json.dumps(_with_remote_ref("../../home/.docker/config.json#/Secret")))
    proc = run_cli("generate", str(spec), "--out", str(tmp_path / "wide"), "--no-snapshot", "--ref-root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr


# -- 8. secrets written out ------------------------------------------------------------------------

SECRETS = ("us3r-s3cret", "pa55-s3cret", "access-s3cret", "token-s3cret", "key-s3cret")


def _leaks(proc, *folders) -> list[str]:
    """Where any of SECRETS appears: the CLI's output, or a file under `folders`."""
    found = [f"cli: {s}" for s in SECRETS if s in proc.stdout + proc.stderr]
    for folder in folders:
        for path in (p for p in folder.rglob("*") if p.is_file()):
            text = path.read_bytes().decode("utf-8", "replace")
            found += [f"{path}: {s}" for s in SECRETS if s in text]
    return found


def test_hole_secrets_written_out_source_url_credentials_reach_no_output(tmp_path):
    spec = json.loads(json.dumps(MINI))
    spec["servers"] = [{"url": "/api/v3"}]  # relative: the base URL comes from the spec's URL
    with_ref = json.loads(json.dumps(spec))
    with_ref["paths"]["/ping"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {
        "$ref": "parts.json#/Ping"
    }
    with HttpServer() as server:
        server.routes["/specs/openapi.json"] = Reply(200, spec)
        server.routes["/specs/with-ref.json"] = Reply(200, with_ref)
        server.routes["/specs/parts.json"] = Reply(200, {"Ping": {"type": "object"}})
        host = server.url.removeprefix("http://")
        url = f"http://{SECRETS[0]}:{SECRETS[1]}@{host}/specs/openapi.json"
        url += f"?access_token={SECRETS[2]}&token={SECRETS[3]}&api_key={SECRETS[4]}"
        out, snapshot = tmp_path / "out", tmp_path / "snap" / "spec.json"
        proc = run_cli("generate", url, "--out", str(out), "--snapshot", str(snapshot))
        assert proc.returncode == 0, proc.stderr
        assert f'"http://{host}/api/v3"' in (out / "src" / "mini_mcp" / "upstream.py").read_text()
        assert _leaks(proc, out, snapshot.parent) == []
        checked = run_cli("check", url, "--out", str(out), "--snapshot", str(snapshot))
        assert checked.returncode == 0 and "no drift" in checked.stderr and _leaks(checked) == []
        (out / "README.md").write_text("changed")
        drifted = run_cli("check", url, "--out", str(out), "--snapshot", str(snapshot))
        assert drifted.returncode == 1 and "Regenerate with" in drifted.stdout and _leaks(drifted) == []
        # A remote ref resolved from the spec's URL, and failures: they say where, without the credentials.
        refs = ("--allow-remote-refs", "--allow-private-refs")
        ref_url = url.replace("openapi.json", "with-ref.json")
        fine = run_cli("generate", ref_url, "--out", str(tmp_path / "o1"), "--no-snapshot", *refs)
        assert fine.returncode == 0 and _leaks(fine, tmp_path / "o1") == []
        server.routes["/specs/parts.json"] = Reply(200, b"{not json")
        broken = run_cli("generate", ref_url, "--out", str(tmp_path / "o2"), "--no-snapshot", *refs)
        missing = run_cli("generate", url.replace("openapi", "nothing"), "--out", str(tmp_path / "o3"), "--no-snapshot")
    assert broken.returncode == 1 and "parts.json" in broken.stderr and _leaks(broken) == []
    assert missing.returncode == 3 and "HTTP 404" in missing.stderr and _leaks(missing) == []


# -- 9. code from the manifest ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("module", "evil_marker"),  # an identifier, but not the package under src/: never imported
        ("module", "mini_mcp.server; import os"),
        ("module", "__import__('os')"),
        ("module", "../../evil_marker"),
        ("module", 7),
        ("module", "class"),
        ("version", "1.0\n\x1b[2Jwarning: all good"),
        (None, None),  # not JSON at all
    ],
)
def test_hole_code_from_the_manifest_crafted_values_are_one_line_errors(tmp_path, key, value):
    package = generated_copy(MINI, tmp_path / "pkg", "mini-mcp")
    evil = tmp_path / "path" / "evil_marker"
    evil.mkdir(parents=True)
    marker = tmp_path / "PWNED"
    (evil / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    manifest = package / "typed-mcp.json"
    if key is None:
        manifest.write_text("{not json")
    else:
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), key: value}))
    proc = run_cli("diff", str(package), str(package), env={"PYTHONPATH": str(tmp_path / "path")})
    assert proc.returncode == 1 and "typed-mcp.json" in _one_line(proc)
    assert not marker.exists()


# -- 10. spec text edge cases ----------------------------------------------------------------------

RESERVED = [
    "Any",
    "Field",
    "Literal",
    "CallToolResult",
    "None",
    "str",
    "list",
    "BaseModel",
    "OpenModel",
    "True",
    "AwareDatetime",
]


def _edge_spec() -> dict:
    spec = json.loads(json.dumps(MINI))
    spec["info"]["title"] = "Edge"
    spec["info"]["description"] = "Click [here](https://evil.example/p) ![t](https://evil.example/t.png) \\[x](y)"
    spec["servers"] = [{"url": "http://127.0.0.1:9"}]
    spec["components"] = {
        "schemas": {name: {"type": "object", "properties": {"v": {"type": "string"}}} for name in RESERVED}
    }
    get = spec["paths"]["/ping"]["get"]
    get["summary"] = "lone \ud800 surrogate, see [docs](javascript:alert(1))"
    get["responses"]["200"]["content"]["application/json"]["schema"] = {
        "type": "object",
        "properties": {f"f{i}": {"$ref": f"#/components/schemas/{name}"} for i, name in enumerate(RESERVED)},
    }
    spec["paths"]["/ping"]["post"] = _op(
        "post_ping",
        schema={"$ref": "#/components/schemas/Any"},
        parameters=[
            {"name": "request_body", "in": "query", "schema": {"type": "string"}},
            {"name": "body", "in": "query", "schema": {"type": "string"}},
        ],
        requestBody={
            "required": True,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/None"}}},
        },
    )
    return spec


async def test_hole_spec_text_edge_cases_generate_and_serve(tmp_path, monkeypatch):
    out = tmp_path / "edge"
    path = tmp_path / "edge.json"
    path.write_text(json.dumps(_edge_spec()))  # json.dumps writes the lone surrogate as \ud800
    proc = run_cli("generate", str(path), "--out", str(out), "--package-name", "edge-mcp", "--no-snapshot")
    assert proc.returncode == 0, proc.stderr
    readme = (out / "README.md").read_text()
    assert "\ufffd surrogate" in readme
    # No live link or image from spec text (the README's own links go to its sections, `](#...)`, and
    # to the two clients' install pages, whose addresses the template writes).
    own = r"#|https://cursor\.com/en/install-mcp\?|https://insiders\.vscode\.dev/redirect\?"
    assert not re.search(rf"(?<!\\)\]\((?!{own})", readme) and not re.search(r"(?<!\\)!\[", readme)
    with HttpServer() as server:
        monkeypatch.setenv("EDGE_MCP_BASE_URL", server.url)
        server.routes["/ping"] = Reply(200, {f"f{i}": {"v": name} for i, name in enumerate(RESERVED)})
        async with Client(import_server(out, "edge_mcp")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "\ufffd" in tools["ping"].description
            got = await client.call_tool("ping", {})
            assert not got.is_error and got.structured_content["f4"] == {"v": "None"}
            assert set(tools["post_ping"].input_schema["properties"]) == {"request_body", "body", "request_body_2"}
            server.routes["/ping"] = Reply(200, {"v": "ok"})
            args = {"request_body": "q1", "body": "q2", "request_body_2": {"v": "sent"}}
            posted = await client.call_tool("post_ping", args)
    assert not posted.is_error, posted.content
    seen = server.seen[-1]
    assert seen.raw_path == "/ping?request_body=q1&body=q2" and json.loads(seen.body) == {"v": "sent"}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("nan.json", '{"openapi": "3.0.3", "x": NaN}', "NaN is not a JSON number"),
        ("inf.json", '{"openapi": "3.0.3", "x": -Infinity}', "-Infinity is not a JSON number"),
        ("big.json", '{"openapi": "3.0.3", "x": 1e400}', "1e400 is not a JSON number"),
        ("nan.yaml", "openapi: 3.0.3\nx: .nan\n", "nan is not a number"),
    ],
)
def test_hole_spec_text_edge_cases_non_finite_numbers_are_one_line_errors(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text)
    proc = run_cli("generate", str(tmp_path / name), "--out", str(tmp_path / "o"), "--no-snapshot")
    assert proc.returncode == 1 and expected in _one_line(proc)


# -- 11. runtime hygiene ---------------------------------------------------------------------------


def token_endpoint(server: HttpServer, delay: float = 0.0) -> list:
    issued = []

    def issue(seen):
        issued.append(seen)
        return Reply(200, {"access_token": f"tok-{len(issued)}", "expires_in": 3600}, delay=delay)

    server.routes["/v1/oauth/token"] = issue
    return issued


@pytest.fixture
def machine(monkeypatch, upstream, server_factory):
    server_factory()  # imports the package: its one `api` starts each test without a token
    monkeypatch.setenv(f"{PREFIX}_MACHINE_CLIENT_ID", "client-1")
    monkeypatch.setenv(f"{PREFIX}_MACHINE_CLIENT_SECRET", "client-s3cret")
    importlib.import_module("guarded.upstream").api._tokens.clear()
    upstream.routes["/v1/machine"] = Reply(200, {})
    return upstream


async def test_hole_runtime_hygiene_token_refresh_is_serialized(server_factory, machine):
    issued = token_endpoint(machine, delay=0.5)
    async with Client(server_factory()) as client:
        results = []

        async def one():
            results.append(await client.call_tool("get_machine", {}))

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(one)
    assert len(issued) == 1 and not any(r.is_error for r in results)  # one refresh; the others waited for it
    assert {s.headers["authorization"] for s in machine.seen if s.raw_path == "/v1/machine"} == {"Bearer tok-1"}


@pytest.mark.parametrize("token_url", ["http://192.0.2.1/oauth/token", "http://token.example/t", "ftp://x/t"])
async def test_hole_runtime_hygiene_token_url_must_be_https(server_factory, machine, monkeypatch, token_url):
    monkeypatch.setenv(f"{PREFIX}_MACHINE_TOKEN_URL", token_url)
    result = await call(server_factory, "get_machine")
    assert result.is_error and "must be https" in result.content[0].text
    assert machine.seen == []


async def test_hole_runtime_hygiene_client_secret_is_not_redirected(server_factory, machine):
    with HttpServer() as elsewhere:
        machine.routes["/v1/oauth/token"] = Reply(307, b"", headers={"location": f"{elsewhere.url}/steal"})
        result = await call(server_factory, "get_machine")
    assert result.is_error and elsewhere.seen == []  # the secret went to the token URL only


async def test_hole_runtime_hygiene_error_excerpts_are_scrubbed(server_factory, upstream, monkeypatch):
    monkeypatch.setenv(f"{PREFIX}_BEARER_AUTH_TOKEN", "bearer-s3cret-value")
    monkeypatch.setenv(f"{PREFIX}_QUERY_KEY_KEY", "query-s3cret-value")

    def echo(seen):
        return Reply(401, {"detail": f"bad credentials: {seen.headers.get('authorization')} {seen.raw_path}"})

    upstream.routes["/v1/secure"] = upstream.routes["/v1/keyed"] = echo
    async with Client(server_factory()) as client:
        results = [await client.call_tool(name, {}) for name in ("get_secure", "get_keyed")]
    for result in results:
        text = result.model_dump_json()
        assert result.is_error and "REDACTED" in text and "HTTP 401" in text
        assert "bearer-s3cret-value" not in text and "query-s3cret-value" not in text


@pytest.mark.parametrize(
    ("name", "value"), [("RETRIES", "-1"), ("RETRIES", "two"), ("RETRIES", "1.5"), ("TIMEOUT", "-3"), ("TIMEOUT", "0")]
)
async def test_hole_runtime_hygiene_bad_numeric_settings_are_clear_errors(
    generated, server_factory, upstream, monkeypatch, name, value
):
    monkeypatch.setenv(f"{PREFIX}_{name}", value)
    proc = subprocess.run(
        [sys.executable, "-m", "guarded"],
        env={**os.environ, "PYTHONPATH": str(generated[0] / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and f"{PREFIX}_{name} must be" in _one_line(proc)
    upstream.routes["/v1/text"] = Reply(200, "x", "text/plain")
    result = await call(server_factory, "get_text")  # called in-process: the same message, as an error
    assert result.is_error and result.content[0].text.startswith(f"{PREFIX}_{name} must be")
    assert upstream.seen == []


def test_hole_runtime_hygiene_logging_configuration_is_left_alone(generated):
    script = (
        "import logging; logging.getLogger('httpx').setLevel(logging.DEBUG);"
        "import guarded.server, guarded.upstream;"
        "assert logging.getLogger('httpx').level == logging.DEBUG, logging.getLogger('httpx').level;"
        "assert not logging.getLogger().handlers, logging.getLogger().handlers"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(generated[0] / "src")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


async def test_hole_runtime_hygiene_query_credential_not_logged_at_debug(server_factory, upstream, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    logging.getLogger("httpx").setLevel(logging.NOTSET)  # whatever an earlier import did
    monkeypatch.setenv(f"{PREFIX}_QUERY_KEY_KEY", "query-s3cret-value")
    upstream.routes["/v1/keyed"] = Reply(200, {})
    result = await call(server_factory, "get_keyed")
    assert not result.is_error and upstream.seen[-1].raw_path == "/v1/keyed?api_key=query-s3cret-value"
    assert "HTTP Request" in caplog.text and "query-s3cret-value" not in caplog.text
    assert result.meta["io.github.typed-mcp/source"]["url"].endswith("/v1/keyed?api_key=REDACTED")


# -- the upstream's TLS certificate ----------------------------------------------------------------


@pytest.fixture
def no_operator_ca(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


async def test_hole_an_untrusted_upstream_certificate_is_refused_once_saying_why(
    server_factory, monkeypatch, tmp_path, no_operator_ca
):
    """HTTPS to the upstream verifies its certificate against the machine's CAs: one that no CA here
    signs is refused with the reason and what to set, and not tried again as if the network had failed."""
    from harness.tls import authority

    with HttpServer(tls=authority(tmp_path).server) as upstream:
        handshakes = []
        accept = upstream.server.get_request
        upstream.server.get_request = lambda: (handshakes.append(1), accept())[1]  # each connection it takes
        upstream.routes["/v1/text"] = Reply(200, "hello", "text/plain")
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", upstream.url + "/v1")
        refused = await call(server_factory, "get_text")
    assert refused.is_error, refused.content
    text = refused.content[0].text
    assert "presented a certificate this server does not trust (unable to get local issuer certificate)" in text
    assert "SSL_CERT_FILE" in text
    assert len(handshakes) == 1 and upstream.seen == []  # once: a certificate does not heal with retries


@pytest.mark.parametrize("expired", [False, True], ids=["valid", "expired"])
async def test_the_ca_an_operator_names_is_trusted_and_an_expired_certificate_is_not(
    server_factory, monkeypatch, tmp_path, no_operator_ca, expired
):
    from harness.tls import authority

    private = authority(tmp_path, expired=expired)
    monkeypatch.setenv("SSL_CERT_FILE", str(private.ca_file))  # read when the server's HTTP client starts
    with HttpServer(tls=private.server) as upstream:
        upstream.routes["/v1/text"] = Reply(200, "hello", "text/plain")
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", upstream.url + "/v1")
        result = await call(server_factory, "get_text")
    if expired:
        assert result.is_error and "(certificate has expired)" in result.content[0].text, result.content
    else:
        assert not result.is_error and result.content[0].text == "hello", result.content
