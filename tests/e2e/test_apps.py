"""Table views as MCP Apps (`io.modelcontextprotocol/ui`): which tools get one, and how the generated
server serves them (resources/list, resources/read, the tools' `_meta.ui.resourceUri`), through the
MCP Python SDK client against the committed demo package and packages generated from small specs.
The view itself runs in a real browser in `test_apps_browser.py`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.shared.exceptions import MCPError

from support import APPS_CLIENT, DEMO, FORECAST_VIEW, HISTORY_VIEW, generate, package_stdio

pytestmark = pytest.mark.anyio


def table_config(html: str) -> dict[str, Any]:
    """The tool's table as the served view holds it."""
    found = re.search(r'<script type="application/json" id="typed-mcp-table">(.*?)</script>', html, re.S)
    assert found, "the view holds no table"
    return json.loads(found.group(1))


async def test_list_tool_points_at_its_view_and_the_server_serves_it(demo_url):
    async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", demo_url), extensions=APPS_CLIENT) as client:
        # Apps for the views, and tasks for the demo's long-running export (`test_tasks.py`).
        assert client.server_capabilities.extensions == {EXTENSION_ID: {}, "io.modelcontextprotocol/tasks": {}}
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["get_forecast"].meta["ui"] == {"resourceUri": FORECAST_VIEW}
        assert [name for name, tool in tools.items() if "ui" in (tool.meta or {})] == ["get_forecast", "get_history"]

        resources = (await client.list_resources()).resources
        assert [(r.uri, r.mime_type) for r in resources] == [
            (FORECAST_VIEW, APP_MIME_TYPE),
            (HISTORY_VIEW, APP_MIME_TYPE),
        ]
        read = await client.read_resource(FORECAST_VIEW)
        (content,) = read.contents
        assert content.mime_type == APP_MIME_TYPE and str(content.uri) == FORECAST_VIEW
        html = content.text
        assert table_config(html) == {
            "tool": "get_forecast",
            "rows": ["result"],
            "columns": ["temperature", "humidity", "conditions"],
        }
        # Self-contained: no script, style, font or image from anywhere else.
        assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", html, re.I)
        assert "@import" not in html and "url(" not in html
        assert (await client.read_resource(FORECAST_VIEW)).contents[0].text == html  # same bytes every time

        # Text-only hosts still get the whole answer in `content`.
        result = await client.call_tool("get_forecast", {"city": "London", "days": 2})
        assert not result.is_error
        assert json.loads(result.content[0].text) == result.structured_content
        assert [row["temperature"] for row in result.structured_content["result"]] == [22.5, 23.5]

        with pytest.raises(MCPError, match="not a table view"):
            await client.read_resource("ui://weather-mcp/tables/get_weather.html")


async def test_views_follow_discovery_mode_and_the_selection(demo_url):
    async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", demo_url, "--discovery")) as client:
        listed = (await client.list_tools()).tools
        size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]))
        assert size < 4096
        described = await client.call_tool("describe_tool", {"name": "get_forecast"})
        assert described.structured_content["_meta"]["ui"] == {"resourceUri": FORECAST_VIEW}
        assert [r.uri for r in (await client.list_resources()).resources] == [FORECAST_VIEW, HISTORY_VIEW]
        called = await client.call_tool("call_tool", {"name": "get_forecast", "arguments": {"city": "Paris"}})
        assert len(called.structured_content["result"]) == 3
    # A server whose selection serves no list tool has no views and no Apps extension; it reads the
    # links to big answers of its read tools (resources/read), and lists no resources.
    async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", demo_url, "--tools", "get_weather")) as client:
        assert client.server_capabilities.resources is not None and not client.server_capabilities.extensions
        assert (await client.list_resources()).resources == []
    # Without a read tool either: no resources at all.
    args = ("--base-url", demo_url, "--tools", "create_report,delete_report")
    async with Client(package_stdio(DEMO, "weather_mcp", *args)) as client:
        assert client.server_capabilities.resources is None and not client.server_capabilities.extensions
        with pytest.raises(MCPError):
            await client.list_resources()


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def _get(schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "get": {
            **extra,
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
        }
    }


STATION = _object({"id": {"type": "string"}, "elevation": {"type": "number"}})
SHAPES_SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Shapes", "version": "1"},
    "paths": {
        "/stations": _get({"type": "array", "items": {"$ref": "#/components/schemas/Station"}}),
        "/pages": _get(_object({"next": {"type": "string"}, "items": {"type": "array", "items": STATION}})),
        "/maybe": _get({"anyOf": [_object({"items": {"type": "array", "items": STATION}}), {"type": "null"}]}),
        "/two": _get(_object({"a": {"type": "array", "items": STATION}, "b": {"type": "array", "items": STATION}})),
        "/names": _get({"type": "array", "items": {"type": "string"}}),
        "/one": _get({"$ref": "#/components/schemas/Station"}),
        "/merged": _get({"type": "array", "items": {"$ref": "#/components/schemas/Sensor"}}),
        "/hostile": _get({"type": "array", "items": _object({"</script><b>x</b>": {"type": "string"}})}),
    },
    "components": {
        "schemas": {
            "Station": STATION,
            "Sensor": {
                "allOf": [
                    {"$ref": "#/components/schemas/Station"},
                    _object({"secret": {"type": "string", "writeOnly": True}, "unit": {"type": "string"}}),
                ]
            },
        }
    },
}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("shapes") / "shapes-mcp"
    generate(SHAPES_SPEC, out, "shapes-mcp")
    return out


async def test_which_answers_get_a_table_and_which_columns(shapes):
    namespace: dict[str, Any] = {}
    exec((shapes / "src/shapes_mcp/tools/__init__.py").read_text(), namespace)
    views = {name: (tuple(rows), tuple(columns)) for name, (rows, columns) in namespace["VIEWS"].items()}
    assert views == {
        "get_stations": (("result",), ("id", "elevation")),  # an array: published as {"result": [...]}
        "get_pages": (("items",), ("id", "elevation")),  # the one array of objects a page holds
        "get_maybe": (("result", "items"), ("id", "elevation")),  # nullable: a union, wrapped
        "get_merged": (("result",), ("id", "elevation", "unit")),  # allOf merged, writeOnly left out
        "get_hostile": (("result",), ("</script><b>x</b>",)),
    }  # /two (which array?), /names (no objects) and /one (no array) get none
    async with Client(package_stdio(shapes, "shapes_mcp", "--base-url", "http://127.0.0.1:9")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name, (rows, columns) in views.items():
            # The declared columns are the outputSchema's own row properties, in its order.
            schema = tools[name].output_schema
            node = schema
            for key in rows:
                node = node["properties"][key]
                node = next((s for s in node.get("anyOf", [node]) if s.get("type") != "null"), node)
                node = _deref(schema, node)
            item = _deref(schema, node["items"])
            assert tuple(name for name in item["properties"]) == columns, name
            assert tools[name].meta["ui"]["resourceUri"] == f"ui://shapes-mcp/tables/{name}.html"
        html = (await client.read_resource("ui://shapes-mcp/tables/get_hostile.html")).contents[0].text
        assert "</script><b>" not in html  # spec text cannot end the script element it is put in
        assert table_config(html)["columns"] == ["</script><b>x</b>"]


def _deref(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


EAGER_AND_LAZY = """
import anyio, json
from mcp import Client
from weather_mcp.server import build_server

async def views(server):
    async with Client(server) as client:
        listed = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in (await client.list_resources()).resources]
        read = [(await client.read_resource(r["uri"])).contents[0].model_dump(mode="json", by_alias=True, exclude_none=True) for r in listed]
        meta = {t.name: t.meta for t in (await client.list_tools()).tools}
        return {"extensions": client.server_capabilities.extensions, "listed": listed, "read": read, "meta": meta}

print(json.dumps([anyio.run(views, build_server()), anyio.run(views, build_server(eager=True))]))
"""


def test_the_eager_server_serves_the_same_views_through_the_sdks_apps_extension():
    """The eager `MCPServer` (the reference the catalog is checked against) serves the views with the
    SDK's own `Apps` extension: the same resources, HTML, tool `_meta` and capability."""
    env = {**os.environ, "PYTHONPATH": str(DEMO / "src")}
    proc = subprocess.run([sys.executable, "-c", EAGER_AND_LAZY], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lazy, eager = json.loads(proc.stdout)
    assert lazy["read"] == eager["read"] and lazy["meta"] == eager["meta"]
    # The same Apps extension; the tasks extension (long-running operations) is the catalog server's own.
    assert lazy["extensions"].pop("io.modelcontextprotocol/tasks") == {}
    assert lazy["extensions"] == eager["extensions"]
    assert [r["uri"] for r in lazy["listed"]] == [r["uri"] for r in eager["listed"]] == [FORECAST_VIEW, HISTORY_VIEW]
    assert {r["mimeType"] for r in lazy["listed"] + eager["listed"]} == {APP_MIME_TYPE}
