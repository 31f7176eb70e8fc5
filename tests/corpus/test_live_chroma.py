"""A second real server (tests/harness/live.py): Chroma, the vector database, from PyPI (`chroma run`,
no auth configured), generated from the OpenAPI 3.1 spec it serves at `/openapi.json`.

What its spec says and the server does not:
- every data operation declares the API-key scheme `ApiKeyAuth` (`x-chroma-token`), which a local
  server does not need: left unset, the key is simply not sent, and the calls succeed;
- `Vec` is the one component name of two array types (collections and databases), and both list
  tools return it: `list_databases`'s real answer lacks the collection fields the spec requires
  (`configuration_json`, ...), a clear error naming them, or text with the config's
  `on_mismatch = "text"`;
- `healthcheck` declares a string and answers an object;
- `get_collection` and `delete_collection` take the collection's name in `{collection_id}`,
  documented as "Collection UUID" (the other record tools do take the UUID).

Records are added with explicit embeddings, so no embedding model is ever downloaded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client

from harness.live import chroma, ok, stdio_server
from harness.node_tools import STRICT_CLIENT_PARAMS, run_ts_client
from harness.strict_run import recording_proxy
from support import generate_plain_and_curated

pytestmark = [pytest.mark.anyio, pytest.mark.needs("live", "node")]
WHERE = {"tenant": "default_tenant", "database": "default_database"}
DB = "/api/v2/tenants/default_tenant/databases/default_database"
KEY = "CHROMA_MCP_API_KEY_AUTH_KEY"
# Three records in a 3-dimensional space: "apple" and "cherry" close together, "bread" apart.
RECORDS = {
    "ids": ["apple", "bread", "cherry"],
    "embeddings": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.9, 0.1, 0.0]],
    "documents": ["a red apple", "a loaf of bread", "a bowl of cherries"],
    "metadatas": [{"kind": "fruit"}, {"kind": "bakery"}, {"kind": "fruit", "stones": True}],
}
INCLUDE = ["documents", "metadatas", "embeddings"]
# The mismatch as the runtime words it, located in structuredContent (`result` wraps the list).
MISMATCH = "upstream response does not match list[VecVecItem]: result.0.configuration_json: Field required"


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory) -> str:
    with chroma(tmp_path_factory.mktemp("chroma")) as base:
        yield base


@pytest.fixture(scope="module")
def packages(chroma_url, tmp_path_factory) -> dict[str, Path]:
    """The package as generated from the live spec, and with the config that takes
    `list_databases`'s answer as text."""
    root = tmp_path_factory.mktemp("chroma-packages")
    config = '[operations.list_databases]\non_mismatch = "text"\n'
    return generate_plain_and_curated(f"{chroma_url}/openapi.json", root, "chroma-mcp", config)


@pytest.fixture(scope="module")
def api(chroma_url):
    with httpx.Client(base_url=chroma_url, timeout=30) as client:
        yield client


def rest(api: httpx.Client, method: str, path: str, body: dict | None = None):
    response = api.request(method, path, json=body)
    response.raise_for_status()
    return response.json()


async def published(client: Client, tool: str) -> dict | None:
    """The outputSchema the server lists for `tool`."""
    return next(t for t in (await client.list_tools()).tools if t.name == tool).output_schema


async def test_a_declared_api_key_left_unset_is_not_sent(packages, chroma_url, api):
    """The spec puts `ApiKeyAuth` on every data operation; the local server needs none. Unset, the
    key is not sent (no "missing credentials" refusal) and the call succeeds; set, it is sent."""
    package = packages["plain"]
    assert KEY in {v["name"] for v in json.loads((package / "typed-mcp.json").read_text())["environment"]}
    with recording_proxy(chroma_url) as proxy:
        async with Client(stdio_server(package, CHROMA_MCP_BASE_URL=proxy.url)) as client:
            identity = await ok(client, "get_user_identity", {})
        async with Client(stdio_server(package, CHROMA_MCP_BASE_URL=proxy.url, **{KEY: "ck-local"})) as client:
            listed = await ok(client, "list_collections", WHERE)
    assert identity == rest(api, "GET", "/api/v2/auth/identity")
    assert identity["tenant"] == WHERE["tenant"] and WHERE["database"] in identity["databases"]
    assert listed == {"result": rest(api, "GET", f"{DB}/collections")}
    unset, given = proxy.seen
    assert unset.raw_path == "/api/v2/auth/identity" and "x-chroma-token" not in unset.headers
    assert given.headers["x-chroma-token"] == "ck-local"


async def test_collection_workflow_matches_rest(packages, api):
    """Create a collection, add records with their embeddings, get, count, query by embedding,
    update, delete records and the collection, through the Python SDK client; each answer is the
    same server's REST answer."""
    async with Client(stdio_server(packages["plain"])) as client:
        assert await ok(client, "get_database", WHERE) == rest(api, "GET", DB)
        created = await ok(client, "create_collection", {**WHERE, "body": {"name": "pantry", "metadata": {"x": 1}}})
        assert created == rest(api, "GET", f"{DB}/collections/pantry") and created["metadata"] == {"x": 1}
        at = {**WHERE, "collection_id": created["id"]}
        path = f"{DB}/collections/{created['id']}"
        assert await ok(client, "get_collection_by_id", at) == created
        # `get_collection`'s `{collection_id}` ("Collection UUID", says the spec) is the name.
        by_uuid = await client.call_tool("get_collection", at)
        assert by_uuid.is_error and "HTTP 404" in by_uuid.content[0].text
        assert await ok(client, "get_collection", {**WHERE, "collection_id": "pantry"}) == created

        assert await ok(client, "collection_add", {**at, "body": RECORDS}) == {}
        assert (
            await ok(client, "collection_count", at) == {"result": rest(api, "GET", f"{path}/count")} == {"result": 3}
        )
        wanted = {"ids": ["apple", "cherry"], "include": INCLUDE}
        got = await ok(client, "collection_get", {**at, "body": wanted})
        assert got == rest(api, "POST", f"{path}/get", wanted)
        assert got["documents"] == ["a red apple", "a bowl of cherries"] and got["embeddings"][1] == [0.9, 0.1, 0.0]
        near = {"query_embeddings": [[1.0, 0.05, 0.0]], "n_results": 2, "include": ["documents", "distances"]}
        found = await ok(client, "collection_query", {**at, "body": near})
        assert found == rest(api, "POST", f"{path}/query", near) and found["ids"] == [["apple", "cherry"]]

        change = {"ids": ["bread"], "documents": ["a baguette"], "metadatas": [{"kind": "bakery", "fresh": True}]}
        assert await ok(client, "collection_update", {**at, "body": change}) == {}
        bakery = {"where": {"kind": "bakery"}, "include": ["documents", "metadatas"]}
        got = await ok(client, "collection_get", {**at, "body": bakery})
        assert got == rest(api, "POST", f"{path}/get", bakery)
        assert got["documents"] == ["a baguette"] and got["metadatas"] == [{"kind": "bakery", "fresh": True}]

        assert await ok(client, "collection_delete", {**at, "body": {"ids": ["apple"]}}) == {"deleted": 1}
        assert (
            await ok(client, "collection_count", at) == {"result": rest(api, "GET", f"{path}/count")} == {"result": 2}
        )
        listed = await ok(client, "list_collections", WHERE)
        assert listed == {"result": rest(api, "GET", f"{DB}/collections")} and "pantry" in {
            c["name"] for c in listed["result"]
        }
        before = rest(api, "GET", f"{DB}/collections_count")
        assert await ok(client, "delete_collection", {**WHERE, "collection_id": "pantry"}) == {}
        assert await ok(client, "count_collections", WHERE) == {"result": before - 1}
        gone = await client.call_tool("get_collection_by_id", at)
    assert gone.is_error and "HTTP 404" in gone.content[0].text and "NotFoundError" in gone.content[0].text
    assert api.get(f"{DB}/collections/pantry").status_code == 404


async def test_list_databases_contradicts_its_spec(packages, api):
    """`Vec` names both array types; the databases' list is published with the collections' item
    model, and the real answer is a clear error naming the missing fields. With the config's
    `on_mismatch = "text"`, the same call gives the data as text after a warning line."""
    databases = rest(api, "GET", "/api/v2/tenants/default_tenant/databases")
    assert databases and "configuration_json" not in databases[0]
    async with Client(stdio_server(packages["plain"])) as client:
        schema = await published(client, "list_databases")
        refused = await client.call_tool("list_databases", {"tenant": "default_tenant"})
        health = await client.call_tool("healthcheck", {})
    text = refused.content[0].text
    assert refused.is_error and refused.structured_content is None
    assert text.startswith(MISMATCH) and "result.0.log_position: Field required" in text, text
    assert health.is_error and "does not match str: result: Input should be a valid string" in health.content[0].text
    item = schema["$defs"][schema["properties"]["result"]["items"]["$ref"].split("/")[-1]]
    assert {"configuration_json", "log_position", "version"} <= set(item["required"])
    async with Client(stdio_server(packages["curated"])) as client:
        assert await published(client, "list_databases") is None
        taken = await client.call_tool("list_databases", {"tenant": "default_tenant"})
    warning, data = taken.content[0].text.split("\n", 1)
    assert not taken.is_error and taken.structured_content is None
    assert warning.startswith(f"warning: {MISMATCH}") and json.loads(data) == databases


@pytest.mark.parametrize("strict", STRICT_CLIENT_PARAMS)
def test_the_typescript_clients_run_the_same_workflow(packages, api, strict):
    """The official TypeScript clients (1.x and 2.x, Ajv checking each structuredContent against its
    outputSchema), in two sessions: delete an old collection, create a new one and take
    list_databases as text (the curated package); then add, update, delete, get, count and query
    records, and meet list_databases's mismatch (the plain one). Each answer is the REST answer."""
    name, old = f"notes-{strict.id}", f"old-notes-{strict.id}"
    rest(api, "POST", f"{DB}/collections", {"name": old})
    databases = rest(api, "GET", "/api/v2/tenants/default_tenant/databases")

    def run(package: Path, *calls: tuple[str, dict]) -> list[dict]:
        env = {"PYTHONPATH": str(package / "src")}
        calls = [{"name": n, "arguments": a} for n, a in calls]
        out = run_ts_client([sys.executable, "-m", "chroma_mcp"], env, calls, client=strict)
        assert out["tools"] == 35 and all(r["ok"] for r in out["results"]), out["results"]
        return out["results"]

    dropped, created, as_text = run(
        packages["curated"],
        ("delete_collection", {**WHERE, "collection_id": old}),
        ("create_collection", {**WHERE, "body": {"name": name}}),
        ("list_databases", {"tenant": "default_tenant"}),
    )
    assert not dropped["isError"] and api.get(f"{DB}/collections/{old}").status_code == 404
    assert created["structuredContent"] == rest(api, "GET", f"{DB}/collections/{name}")
    assert not as_text["isError"] and as_text["structuredContent"] is None
    assert json.loads(as_text["text"].split("\n", 1)[1]) == databases
    at = {**WHERE, "collection_id": created["structuredContent"]["id"]}
    path = f"{DB}/collections/{at['collection_id']}"
    wanted = {"include": INCLUDE}
    near = {"query_embeddings": [[0.0, 1.0, 0.1]], "n_results": 1, "include": ["documents", "distances"]}
    results = run(
        packages["plain"],
        ("collection_add", {**at, "body": RECORDS}),
        ("collection_update", {**at, "body": {"ids": ["cherry"], "documents": ["two cherries"]}}),
        ("collection_delete", {**at, "body": {"ids": ["apple"]}}),
        ("collection_get", {**at, "body": wanted}),
        ("collection_count", at),
        ("collection_query", {**at, "body": near}),
        ("list_collections", WHERE),
        ("list_databases", {"tenant": "default_tenant"}),
    )
    assert not any(r["isError"] for r in results[:-1]), results
    added, updated, deleted, got, count, found, listed, refused = (r["structuredContent"] for r in results)
    assert added == updated == {} and deleted == {"deleted": 1}
    assert got == rest(api, "POST", f"{path}/get", wanted) and got["documents"] == ["a loaf of bread", "two cherries"]
    assert count == {"result": rest(api, "GET", f"{path}/count")} == {"result": 2}
    assert found == rest(api, "POST", f"{path}/query", near) and found["ids"] == [["bread"]]
    assert listed == {"result": rest(api, "GET", f"{DB}/collections")}
    assert results[-1]["isError"] and refused is None and results[-1]["text"].startswith(MISMATCH)
