"""The floor of `bench/load.py`: the least a server on the MCP Python SDK does to answer the load's
two calls, so that what typed-mcp and FastMCP each add on top of their shared stack can be told
apart from the stack itself.

The SDK's low-level `Server` (under both products) with two hand-written tools, `get_weather` and
`create_report`: each call goes to the load's upstream with one shared `httpx2.AsyncClient` (the HTTP
client both use) and returns the upstream's JSON as text and as the structured answer. No argument
check, no answer validation, no auth, no deadlines: nothing a product could ship, only the transport,
Starlette, uvicorn and the upstream exchange every server here pays for.

    LOAD_FLOOR_BASE_URL=http://127.0.0.1:PORT .venv/bin/python -m uvicorn --app-dir bench \\
        --factory floor_server:create_app --workers 4
"""

from __future__ import annotations

import os
from typing import Any


def create_app() -> Any:
    """The ASGI app of one worker: stateless streamable HTTP at /mcp, with GET /health."""
    import httpx2
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    upstream = httpx2.AsyncClient(base_url=os.environ["LOAD_FLOOR_BASE_URL"], timeout=30.0)
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = {"type": "object", "properties": {"body": {"type": "object"}}, "required": ["body"]}
    tools = [
        Tool(name="get_weather", description="Get current weather for a city", input_schema=city),
        Tool(name="create_report", description="Submit a station report", input_schema=body),
    ]

    async def list_tools(context: Any, params: Any) -> ListToolsResult:  # noqa: ARG001 - the SDK passes both
        return ListToolsResult(tools=tools)

    async def call_tool(context: Any, params: Any) -> CallToolResult:  # noqa: ARG001 - the SDK passes both
        arguments = params.arguments or {}
        if params.name == "get_weather":
            response = await upstream.get(f"/v1/weather/{arguments['city']}")
        else:
            response = await upstream.post("/v1/reports", json=arguments["body"])
        return CallToolResult(
            content=[TextContent(type="text", text=response.text)],
            structured_content=response.json(),
            is_error=response.is_error,
        )

    async def health(request: Any) -> JSONResponse:  # noqa: ARG001 - starlette passes the request
        return JSONResponse({"status": "ok"})

    server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
    json_response = os.environ.get("LOAD_FLOOR_JSON_RESPONSE") == "1"
    routes = [Route("/health", endpoint=health, methods=["GET"])]
    return server.streamable_http_app(stateless_http=True, json_response=json_response, custom_starlette_routes=routes)
