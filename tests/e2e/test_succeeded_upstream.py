"""A call that is not idempotent whose upstream answered 2xx, but whose answer the tool cannot give
as it promises (issue 31 item 2: a POST answered 201 with a body missing a required field came back
as a plain error, the status only in `_meta`; an agent retried and created a second invoice).

The result is an `isError` (the tool publishes an outputSchema: a result without isError must carry
structuredContent matching it, and strict clients refuse one that does not), whose text leads with
the fact that the operation SUCCEEDED upstream and must not be retried, then the upstream status and
the data as text. Checked through the MCP Python SDK client and the TypeScript SDK's two lines, each
against a scripted upstream on 127.0.0.1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp.client import Client

from harness.node_tools import TS1, TS2, run_ts_client
from support import HttpServer, Reply, generate, package_stdio

INVOICE = {
    "type": "object",
    "required": ["id", "amount"],
    "properties": {"id": {"type": "string"}, "amount": {"type": "integer"}},
}
NEW_INVOICE = {"type": "object", "properties": {"amount": {"type": "integer"}}}


def _json(status: str, schema: dict) -> dict:
    return {status: {"description": "ok", "content": {"application/json": {"schema": schema}}}}


SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Invoices", "version": "1"},
    "paths": {
        "/invoices": {
            "post": {
                "operationId": "createInvoice",
                "requestBody": {"required": True, "content": {"application/json": {"schema": NEW_INVOICE}}},
                "responses": _json("201", INVOICE),
            }
        },
        "/invoices/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "put": {
                "operationId": "replaceInvoice",
                "requestBody": {"required": True, "content": {"application/json": {"schema": NEW_INVOICE}}},
                "responses": _json("200", INVOICE),
            },
        },
    },
}
MODULE = "invoices_mcp"
# The upstream created the invoice, but its answer lacks `id`, which the spec requires.
CREATED_WITHOUT_ID = Reply(201, {"amount": 12, "status": "open"})
LEAD = "POST /invoices SUCCEEDED upstream (HTTP 201): the operation took effect. Do NOT retry this call"


@pytest.fixture(scope="module")
def invoices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("invoices") / "invoices-mcp"
    generate(SPEC, out, "invoices-mcp")
    return out


def _params(package: Path, upstream: str, **env: str):
    params = package_stdio(package, MODULE)
    params.env = {**params.env, "INVOICES_MCP_BASE_URL": upstream, **env}
    return params


@pytest.mark.anyio
async def test_a_post_that_succeeded_upstream_says_so_first_and_not_to_retry(invoices: Path):
    with HttpServer() as upstream:
        async with Client(_params(invoices, upstream.url, INVOICES_MCP_MAX_RESPONSE_BYTES="4096")) as client:
            upstream.routes["/invoices"] = CREATED_WITHOUT_ID
            result = await client.call_tool("create_invoice", {"body": {"amount": 12}})
            text = result.content[0].text
            assert result.is_error and result.structured_content is None
            assert text.startswith(LEAD), text
            assert "upstream response does not match CreateInvoiceResponse: id: Field required" in text
            assert text.endswith('The upstream answer (HTTP 201), as text:\n{"amount": 12, "status": "open"}'), text
            assert result.meta["io.github.typed-mcp/source"]["status"] == 201
            # Every way a 2xx answer can fail to be the tool's result says the same first.
            for reply, problem in [
                (Reply(201, "{not json"), "upstream returned invalid JSON"),
                (Reply(201, "<p>created</p>", content_type="text/html"), "where JSON was promised"),
                (Reply(201, b""), "with an empty body where JSON was promised"),
                (Reply(201, {"id": "x" * 8000, "amount": 1}), "over the 4096 byte cap"),
            ]:
                upstream.routes["/invoices"] = reply
                result = await client.call_tool("create_invoice", {"body": {"amount": 12}})
                text = result.content[0].text
                assert result.is_error and text.startswith(LEAD) and problem in text, text
            # An idempotent call whose answer does not match is the plain error it was: a retry is safe.
            upstream.routes["/invoices/a"] = Reply(200, {"amount": 12})
            replaced = await client.call_tool("replace_invoice", {"id": "a", "body": {"amount": 12}})
            assert replaced.is_error and replaced.content[0].text.startswith("upstream response does not match")
            # A good answer is the structured result, as always.
            upstream.routes["/invoices"] = Reply(201, {"id": "inv_1", "amount": 12})
            good = await client.call_tool("create_invoice", {"body": {"amount": 12}})
            assert not good.is_error and good.structured_content == {"id": "inv_1", "amount": 12}
    assert [seen.method for seen in upstream.seen] == ["POST"] * 5 + ["PUT", "POST"]  # nothing was retried


@pytest.mark.parametrize("line", [TS1, TS2], ids=["ts1", "ts2"])
def test_a_strict_client_reads_the_success_first_without_a_protocol_error(invoices: Path, line):
    """Both TypeScript SDK lines take the result (no -32600 for a missing structuredContent, no
    -32602 for one that contradicts the outputSchema) and show the success first."""
    with HttpServer() as upstream:
        upstream.routes["/invoices"] = CREATED_WITHOUT_ID
        command = [sys.executable, "-m", MODULE, "--base-url", upstream.url]
        calls = [{"name": "create_invoice", "arguments": {"body": {"amount": 12}}}]
        run = run_ts_client(command, {"PYTHONPATH": str(invoices / "src")}, calls, client=line)
    (result,) = run["results"]
    assert result["ok"] and result["errorCode"] is None, result
    assert result["isError"] and result["structuredContent"] is None, result
    assert result["text"].startswith(LEAD), result["text"]
    assert len(upstream.seen) == 1
