"""File arguments by reference: the demo package's upload tools, served over stdio and streamable HTTP,
against the real demo API (which answers the size, SHA-256 and media type of what it received).

A reference is hostile input: every escape (a path outside the roots, `..`, percent-encoded `..`, a
link out, a device, a FIFO, a file over the cap, another machine's file, a host not allowed, a
redirect to one) is an isError naming the reason, sent nothing upstream, and never stalls the server."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import environment
from harness.demo.process import free_port, running
from harness.node_tools import TS1, TS2_MODERN, run_ts_client
from support import DEMO, HttpServer, Reply, generate, package_stdio

pytestmark = pytest.mark.anyio

CAP = 64 * 1024  # WEATHER_MCP_MAX_RESPONSE_BYTES of the servers here: the cap of a referenced file
HANG = 60  # seconds: a call that takes longer has stalled
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
SECRET = b"SECRET-CONTENT-never-in-an-error"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A root the servers may read, and around it what they may not."""
    top = tmp_path_factory.mktemp("files")
    root, outside = top / "root", top / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "photo.png").write_bytes(PNG)
    (root / "notes.txt").write_bytes(b"hello notes\n")
    (root / "big.bin").write_bytes(SECRET + b"\0" * CAP)
    (outside / "secret.txt").write_bytes(SECRET)
    (root / "escape").symlink_to(outside / "secret.txt")
    (root / "zero").symlink_to("/dev/zero")
    os.mkfifo(root / "fifo")
    return {"root": root, "outside": outside}


@pytest.fixture(scope="module")
def file_host():
    """The http(s) host the servers may fetch from, and another they may not."""
    with HttpServer() as allowed, HttpServer() as other:
        allowed.routes["/photo.png"] = Reply(200, PNG, "image/png")
        allowed.routes["/away"] = Reply(302, b"", "text/plain", headers={"location": f"{other.url}/photo.png"})
        allowed.routes["/big.bin"] = Reply(200, SECRET + b"\0" * CAP, "application/octet-stream")
        other.routes["/photo.png"] = Reply(200, SECRET, "image/png")
        yield allowed, other


def settings(files: dict[str, Path], allowed: HttpServer) -> dict[str, str]:
    return {
        "WEATHER_MCP_FILE_ROOTS": os.pathsep.join([str(files["root"]), "/dev"]),
        "WEATHER_MCP_FILE_HOSTS": httpx.URL(allowed.url).netloc.decode(),
        "WEATHER_MCP_MAX_RESPONSE_BYTES": str(CAP),
    }


@contextlib.asynccontextmanager
async def connect(transport: str, demo_url: str, env: dict[str, str]) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = package_stdio(DEMO, "weather_mcp", "--base-url", demo_url)
        params.env = {**(params.env or {}), **env}
        async with Client(params) as client:
            yield client
        return
    port = free_port()
    args = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url, "--transport", "streamable-http"]
    with running([*args, "--port", str(port)], f"http://127.0.0.1:{port}/health", {**environment(DEMO / "src"), **env}):
        async with httpx2.AsyncClient() as http:
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                yield client


@pytest.fixture(scope="module", params=["stdio", "streamable-http"])
def transport(request) -> str:
    return request.param


def uploads(demo_url: str) -> int:
    """How many upload requests reached the demo API."""
    log = httpx.get(f"{demo_url}/_debug/requests").json()
    return sum(entry["raw_path"] in ("/v1/attachments", "/v1/stations/s1/photo") for entry in log)


async def call(client: Client, name: str, arguments: dict):
    with anyio.fail_after(HANG):
        return await client.call_tool(name, arguments)


def text(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


async def test_the_schemas_say_both_forms(demo_url, transport, files, file_host):
    async with connect(transport, demo_url, settings(files, file_host[0])) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    photo = tools["put_station_photo"].input_schema
    upload = tools["upload_attachment"].input_schema
    for schema in (photo, upload):
        jsonschema.Draft202012Validator.check_schema(schema)
    body = photo["properties"]["body"]
    assert body["anyOf"][0] == {"type": "string"} and body["contentEncoding"] == "base64"
    reference = photo["$defs"][body["anyOf"][1]["$ref"].split("/")[-1]]
    assert reference["required"] == ["uri"] and set(reference["properties"]) == {"uri", "mimeType"}
    validator = jsonschema.Draft202012Validator(photo)
    assert validator.is_valid({"station": "s1", "body": "AAEC"})
    assert validator.is_valid({"station": "s1", "body": {"uri": "file:///a.png", "mimeType": "image/png"}})
    assert not validator.is_valid({"station": "s1", "body": {"path": "/a.png"}})
    part = upload["$defs"][upload["properties"]["body"]["$ref"].split("/")[-1]]["properties"]["file"]
    assert "file:///" in part["description"]
    assert jsonschema.Draft202012Validator(upload).is_valid({"body": {"file": {"uri": "https://example.com/a.png"}}})


async def test_the_right_bytes_arrive(demo_url, transport, files, file_host):
    root = files["root"]
    png = hashlib.sha256(PNG).hexdigest()
    async with connect(transport, demo_url, settings(files, file_host[0])) as client:
        given = await call(client, "put_station_photo", {"station": "s1", "body": base64.b64encode(PNG).decode()})
        local = await call(
            client,
            "put_station_photo",
            {"station": "s1", "body": {"uri": (root / "photo.png").as_uri(), "mimeType": "image/png"}},
        )
        part = await call(client, "upload_attachment", {"body": {"file": {"uri": (root / "photo.png").as_uri()}}})
        typed = await call(client, "upload_attachment", {"body": {"file": "typed text", "note": "n"}})
        fetched = await call(client, "upload_attachment", {"body": {"file": {"uri": f"{file_host[0].url}/photo.png"}}})
    given, local, part, fetched = (received(result) for result in (given, local, part, fetched))
    assert given == {"size": len(PNG), "sha256": png, "content_type": "application/octet-stream"}
    assert local == {"size": len(PNG), "sha256": png, "content_type": "image/png"}
    # A file part: its name, and its media type guessed from it (or as the host served it).
    assert part == fetched == {**local, "filename": "photo.png"}
    assert typed.structured_content["sha256"] == hashlib.sha256(b"typed text").hexdigest()
    assert typed.structured_content["note"] == "n" and typed.structured_content["filename"] == "file"


@pytest.mark.parametrize("line", [TS1, TS2_MODERN], ids=["ts1", "ts2-modern"])
def test_strict_typescript_clients_send_files_by_reference(demo_url, files, file_host, line):
    root, png = files["root"], hashlib.sha256(PNG).hexdigest()
    before = uploads(demo_url)
    command = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url]
    env = {"PYTHONPATH": str(DEMO / "src"), **settings(files, file_host[0])}
    photo = {"uri": (root / "photo.png").as_uri(), "mimeType": "image/png"}
    escape = (files["outside"] / "secret.txt").as_uri()
    calls = [
        {"name": "put_station_photo", "arguments": {"station": "s1", "body": photo}},
        {"name": "upload_attachment", "arguments": {"body": {"file": {"uri": f"{file_host[0].url}/photo.png"}}}},
        {"name": "put_station_photo", "arguments": {"station": "s1", "body": {"uri": escape}}},
    ]
    local, fetched, refused = run_ts_client(command, env, calls, client=line)["results"]
    for result in (local, fetched):  # structuredContent valid for the outputSchema (AJV): no -32602
        assert result["ok"] and not result["isError"], result
        assert result["structuredContent"]["sha256"] == png and result["structuredContent"]["size"] == len(PNG)
    assert fetched["structuredContent"]["filename"] == "photo.png"
    assert (
        refused["ok"] and refused["isError"] and "outside the folders WEATHER_MCP_FILE_ROOTS allows" in refused["text"]
    )
    assert "SECRET" not in refused["text"]
    assert uploads(demo_url) == before + 2  # the refused one sent nothing


def received(result) -> dict:
    """What the demo API says it received, without the fields it left empty."""
    assert not result.is_error, result.content
    return {key: value for key, value in result.structured_content.items() if value is not None}


def refusals(files: dict[str, Path], allowed: HttpServer, other: HttpServer) -> list[tuple[str, str]]:
    """(URI, what the error says) for each reference the server must refuse."""
    root, outside = files["root"], files["outside"]
    outside_file = "outside the folders WEATHER_MCP_FILE_ROOTS allows"
    return [
        ((outside / "secret.txt").as_uri(), outside_file),
        (f"{root.as_uri()}/../outside/secret.txt", outside_file),
        (f"{root.as_uri()}/%2e%2e/outside/secret.txt", outside_file),
        ((root / "escape").as_uri(), outside_file),  # a link that leads out
        ((root / "zero").as_uri(), "not a regular file"),  # a link to a device (inside /dev, a root here)
        ("file:///dev/zero", "not a regular file"),  # inside a root (/dev), but a device
        ((root / "fifo").as_uri(), "not a regular file"),  # would block a reader until a writer came
        ((root / "big.bin").as_uri(), f"over the {CAP} byte cap"),
        (f"file://otherhost{root}/photo.png", "only local files"),
        ((root / "missing.png").as_uri(), "no such file"),
        (f"{allowed.url}/big.bin", f"over the {CAP} byte cap"),
        (f"{other.url}/photo.png", "is not in WEATHER_MCP_FILE_HOSTS"),
        (f"{allowed.url}/away", "is not in WEATHER_MCP_FILE_HOSTS"),  # a redirect to a host not allowed
        ("ftp://example.com/a.png", "only file:// and http(s):// URIs"),
    ]


async def test_every_escape_is_refused_and_sends_nothing(demo_url, transport, files, file_host):
    allowed, other = file_host
    cases = refusals(files, allowed, other)
    before, other_before = uploads(demo_url), len(other.seen)
    async with connect(transport, demo_url, settings(files, allowed)) as client:
        for uri, reason in cases:
            raw = await call(client, "put_station_photo", {"station": "s1", "body": {"uri": uri}})
            part = await call(client, "upload_attachment", {"body": {"file": {"uri": uri}}})
            for result in (raw, part):
                assert result.is_error, (uri, result.content)
                assert reason in text(result) and uri[:100] in text(result), (uri, text(result))
                assert "SECRET" not in text(result)
        # The server still answers at once after them all: nothing stalled it.
        alive = await call(client, "get_temperature", {"city": "London"})
    assert not alive.is_error
    assert uploads(demo_url) == before  # not one of them reached the API
    assert len(other.seen) == other_before  # nor the host that is not allowed


async def test_a_media_type_cannot_add_a_header(demo_url, files, file_host):
    """mimeType becomes a Content-Type line (of the request, or of a multipart part): CR LF in it would
    add headers of the model's choosing."""
    before = uploads(demo_url)
    reference = {"uri": (files["root"] / "photo.png").as_uri(), "mimeType": "image/png\r\nX-Injected: 1"}
    async with connect("stdio", demo_url, settings(files, file_host[0])) as client:
        raw = await call(client, "put_station_photo", {"station": "s1", "body": reference})
        part = await call(client, "upload_attachment", {"body": {"file": reference}})
    for result in (raw, part):
        assert result.is_error and "mimeType is not a media type" in text(result)
    assert uploads(demo_url) == before


async def test_off_until_the_operator_allows(demo_url, files):
    async with connect("stdio", demo_url, {}) as client:
        local = await call(client, "put_station_photo", {"station": "s1", "body": {"uri": files["root"].as_uri()}})
        remote = await call(client, "put_station_photo", {"station": "s1", "body": {"uri": "https://example.com/a"}})
    assert local.is_error and "reading local files is off; set WEATHER_MCP_FILE_ROOTS" in text(local)
    assert remote.is_error and "fetching URLs is off; set WEATHER_MCP_FILE_HOSTS" in text(remote)


BLOBS = {
    "openapi": "3.0.3",
    "info": {"title": "Blobs", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "paths": {
        f"/{name}": {
            "get": {
                "operationId": f"get_{name}",
                "responses": {
                    "200": {"description": "ok", "content": {media: {"schema": {"type": "string", "format": "binary"}}}}
                },
            }
        }
        for name, media in (("photo", "image/png"), ("report", "application/pdf"))
    },
}


async def test_binary_answers_inline_and_past_the_budget_by_link(tmp_path):
    """The other way: a binary answer is an image or an embedded blob; past the tool's inline budget,
    a line and a resource_link whose resources/read gives the bytes whole."""
    out = tmp_path / "blobs-mcp"
    generate(BLOBS, out, "blobs-mcp")
    small, big = PNG[:100], b"%PDF-1.7\n" + bytes(range(256)) * 40
    with HttpServer() as upstream:
        upstream.routes["/photo"] = Reply(200, small, "image/png")
        upstream.routes["/report"] = Reply(200, big, "application/pdf")
        params = package_stdio(out, "blobs_mcp", "--base-url", upstream.url)
        params.env = {**(params.env or {}), "BLOBS_MCP_INLINE_BYTES": "1000"}
        async with Client(params) as client:
            photo = await call(client, "get_photo", {})
            report = await call(client, "get_report", {})
            (link,) = [block for block in report.content if block.type == "resource_link"]
            with anyio.fail_after(HANG):
                read = await client.read_resource(link.uri)
    assert not photo.is_error and photo.content[0].type == "image"
    assert base64.b64decode(photo.content[0].data) == small
    assert not report.is_error and link.mime_type == "application/pdf" and link.size == len(big)
    assert "over the 1000 bytes this tool answers inline" in text(report)
    (contents,) = read.contents
    assert contents.mime_type == "application/pdf" and base64.b64decode(contents.blob) == big
    assert len(upstream.seen) == 3  # the call, and the link's read made it again
