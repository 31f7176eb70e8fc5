"""Real open-source servers, not mocks: generate from a live server's own spec, drive a realistic
workflow through the strict clients, and check every answer against the same server's REST answer.

Kinto (Mozilla's JSON storage service, from PyPI, memory backend) serves Swagger 2.0 at
`/v1/__api__`. As `kinto init` sets it up, every write needs Basic auth against an account made
through the API, and its spec declares no security scheme at all."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client

from harness.live import kinto, ok, stdio_server
from harness.node_tools import run_ts_client
from support import generate_plain_and_curated

pytestmark = [pytest.mark.anyio, pytest.mark.needs("live", "node")]
ADMIN = ("admin", "s3cret-pass")
BASIC = "Basic " + base64.b64encode(":".join(ADMIN).encode()).decode()


@pytest.fixture(scope="module")
def kinto_url(tmp_path_factory) -> str:
    with kinto(tmp_path_factory.mktemp("kinto")) as base:
        # The admin account, as a user makes it first (anyone may create an account).
        httpx.put(f"{base}/accounts/{ADMIN[0]}", json={"data": {"password": ADMIN[1]}}).raise_for_status()
        yield base


@pytest.fixture(scope="module")
def packages(kinto_url, tmp_path_factory) -> dict[str, Path]:
    """The package as generated from the live spec alone, and with the config that declares the
    Basic auth the spec leaves out."""
    root = tmp_path_factory.mktemp("kinto-packages")
    return generate_plain_and_curated(f"{kinto_url}/__api__", root, "kinto-mcp", "[auth]\nbasic = true\n")


def rest(kinto_url: str, path: str) -> httpx.Response:
    return httpx.get(f"{kinto_url}{path}", auth=ADMIN, timeout=10)


async def test_an_undeclared_credential_goes_in_the_headers_variable(packages, kinto_url):
    """The spec declares no scheme: a write without credentials gets Kinto's 401, and the error
    names the variable for it; with `KINTO_MCP_HEADERS` the same write succeeds."""
    async with Client(stdio_server(packages["plain"])) as client:
        carol = await ok(client, "update_account", {"id": "carol", "body": {"data": {"password": "pw-of-carol"}}})
        assert carol["data"]["id"] == "carol" and rest(kinto_url, "/accounts/carol").status_code == 200
        refused = await client.call_tool("create_bucket", {"body": {"data": {"id": "plain"}}})
    text = refused.content[0].text
    assert refused.is_error and "HTTP 401" in text and "KINTO_MCP_HEADERS" in text, text
    async with Client(stdio_server(packages["plain"], KINTO_MCP_HEADERS=f"Authorization: {BASIC}")) as client:
        created = await ok(client, "create_bucket", {"body": {"data": {"id": "plain"}}})
    assert created["data"]["id"] == "plain"
    assert rest(kinto_url, "/buckets/plain").json()["data"] == created["data"]


async def test_crud_workflow_matches_rest(packages, kinto_url):
    """Create, read, list, update, patch and delete through the Python SDK client; each answer is
    what the server's REST API says about the same object."""
    package = packages["curated"]
    credentials = {"KINTO_MCP_BASIC_USERNAME": ADMIN[0], "KINTO_MCP_BASIC_PASSWORD": ADMIN[1]}
    async with Client(stdio_server(package, **credentials)) as client:
        bucket = await ok(client, "create_bucket", {"body": {"data": {"id": "shop"}}})
        assert rest(kinto_url, "/buckets/shop").json() == bucket
        collection = await ok(client, "create_collection", {"bucket_id": "shop", "body": {"data": {"id": "items"}}})
        assert rest(kinto_url, "/buckets/shop/collections/items").json() == collection
        where = {"bucket_id": "shop", "collection_id": "items"}
        pen = await ok(client, "create_record", {**where, "body": {"data": {"title": "pen", "price": 2}}})
        record = f"/buckets/shop/collections/items/records/{pen['data']['id']}"
        assert rest(kinto_url, record).json() == pen
        assert await ok(client, "get_record", {**where, "id": pen["data"]["id"]}) == rest(kinto_url, record).json()
        await ok(client, "create_record", {**where, "body": {"data": {"title": "ink", "price": 5}}})
        listed = await ok(client, "get_records", {**where, "sort": ["price"]})
        assert listed == rest(kinto_url, "/buckets/shop/collections/items/records?_sort=price").json()
        assert [r["title"] for r in listed["data"]] == ["pen", "ink"]
        patched = await ok(client, "patch_record", {**where, "id": pen["data"]["id"], "body": {"data": {"price": 3}}})
        assert patched == rest(kinto_url, record).json() and patched["data"]["price"] == 3
        replaced = await ok(client, "update_record", {**where, "id": pen["data"]["id"], "body": {"data": {"t": 1}}})
        assert replaced == rest(kinto_url, record).json() and "title" not in replaced["data"]
        deleted = await ok(client, "delete_record", {**where, "id": pen["data"]["id"]})
        assert deleted["data"]["deleted"] is True and rest(kinto_url, record).status_code == 404
        listed = await ok(client, "get_records", where)
        assert listed == rest(kinto_url, "/buckets/shop/collections/items/records").json()
        assert [r["title"] for r in listed["data"] if "title" in r] == ["ink"]


async def test_the_typescript_client_reads_the_same(packages, kinto_url):
    """The official TypeScript client (strict: Ajv checks each structuredContent against the
    outputSchema) lists the tools and reads what the REST API holds."""
    package = packages["curated"]
    admin = httpx.Client(base_url=kinto_url, auth=ADMIN, timeout=10)
    admin.put("/buckets/ts", json={"data": {}}).raise_for_status()
    admin.put("/buckets/ts/collections/notes", json={"data": {}}).raise_for_status()
    note = admin.post("/buckets/ts/collections/notes/records", json={"data": {"text": "hi"}}).json()
    where = {"bucket_id": "ts", "collection_id": "notes"}
    run = run_ts_client(
        [sys.executable, "-m", "kinto_mcp"],
        {
            "PYTHONPATH": str(package / "src"),
            "KINTO_MCP_BASIC_USERNAME": ADMIN[0],
            "KINTO_MCP_BASIC_PASSWORD": ADMIN[1],
        },
        [
            {"name": "get_records", "arguments": where},
            {"name": "get_record", "arguments": {**where, "id": note["data"]["id"]}},
            {"name": "get_buckets", "arguments": {}},
            {"name": "server_info", "arguments": {}},
        ],
    )
    assert run["tools"] == len(json.loads((package / "typed-mcp.json").read_text())["tools"]) == 43
    assert all(r["ok"] and not r["isError"] for r in run["results"]), run["results"]
    records, record, buckets, info = (r["structuredContent"] for r in run["results"])
    assert records == admin.get("/buckets/ts/collections/notes/records").json()
    assert record == note
    assert {"ts"} <= {b["id"] for b in buckets["data"]}
    assert info["project_name"] == "kinto"
