"""The table view in a real headless browser: Debian's Chromium driven by playwright (no browser
download: the system's executable), fed a real tool result the way an MCP Apps host feeds it.

The demo package's get_forecast is called through the MCP Python SDK client against the demo API,
its view is read with resources/read, and a host page puts the view in a sandboxed iframe and
answers its JSON-RPC over postMessage (ui/initialize, then ui/notifications/tool-input and
tool-result). A missing browser fails the test: `make test` installs Chromium (the Makefile's
`$(CHROMIUM)` target)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from support import APPS_CLIENT, DEMO, FORECAST_VIEW, package_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.needs("chromium")]

CHROMIUM = os.environ.get("TYPED_MCP_CHROMIUM", "/usr/bin/chromium")
# The screenshot goes to a temporary folder, so a test run never changes a committed file; set
# TYPED_MCP_SCREENSHOT=reports/mcp-app-table.png to refresh the committed one.
SCREENSHOT = Path(os.environ.get("TYPED_MCP_SCREENSHOT") or Path(tempfile.mkdtemp()) / "mcp-app-table.png")
ARGUMENTS = {"city": "London", "days": 5}

# The host side of MCP Apps, as a chat client runs it: a sandboxed iframe (scripts only, an opaque
# origin), and the host's answers to the view's messages; every message the view sends is recorded.
HOST = """<!doctype html><html><body style="margin:0">
<iframe id="view" sandbox="allow-scripts" style="border:0;width:680px;height:460px"></iframe>
<script>
window.received = [];
window.host = (html, tool, args, result) => {
  const frame = document.getElementById("view");
  window.addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    window.received.push(message);
    const reply = (m) => frame.contentWindow.postMessage({ jsonrpc: "2.0", ...m }, "*");
    if (message.method === "ui/initialize") {
      reply({ id: message.id, result: {
        protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" },
        hostCapabilities: {}, hostContext: { toolInfo: { tool }, theme: "light" } } });
    } else if (message.method === "ui/notifications/initialized") {
      reply({ method: "ui/notifications/tool-input", params: { arguments: args } });
      reply({ method: "ui/notifications/tool-result", params: result });
    }
  });
  frame.srcdoc = html;
};
</script></body></html>"""


async def _real_result(demo_url: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The view's HTML, the tool's definition and a real get_forecast result, through the SDK client."""
    async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", demo_url), extensions=APPS_CLIENT) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        tool = tools["get_forecast"]
        html = (await client.read_resource(tool.meta["ui"]["resourceUri"])).contents[0].text
        result = await client.call_tool("get_forecast", ARGUMENTS)
    assert not result.is_error
    dump = {"mode": "json", "by_alias": True, "exclude_none": True}
    return html, tool.model_dump(**dump), result.model_dump(**dump)


def _browser_api() -> Any:
    """playwright's async API, or a failure that says what to install (never a skip)."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set TYPED_MCP_CHROMIUM)")
    from playwright.async_api import async_playwright

    return async_playwright


async def test_the_view_renders_a_real_result_as_a_sortable_filterable_table_with_a_chart(demo_url):
    async_playwright = _browser_api()
    html, tool, result = await _real_result(demo_url)
    assert tool["_meta"]["ui"]["resourceUri"] == FORECAST_VIEW
    rows = result["structuredContent"]["result"]
    temperatures = [row["temperature"] for row in rows]
    assert temperatures == [22.5, 23.5, 24.5, 25.5, 26.5]

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 700, "height": 480})
            await page.set_content(HOST)
            await page.evaluate(
                "([html, tool, args, result]) => host(html, tool, args, result)", [html, tool, ARGUMENTS, result]
            )
            view = page.frame_locator("#view")
            body = view.locator("#table tbody tr")
            await body.first.wait_for()

            headers = await view.locator("#table thead th").all_inner_texts()
            assert headers == ["temperature", "humidity", "conditions"]  # the declared columns, in order
            assert await body.count() == 5
            assert await _column(view, 0) == [str(t) for t in temperatures]
            assert await _column(view, 2) == ["sunny"] * 5
            assert await view.locator("#status").inner_text() == "5 of 5 rows"

            header = view.locator("#table thead th", has_text="temperature")
            await header.click()
            assert await header.get_attribute("aria-sort") == "ascending"
            assert await _column(view, 0) == ["22.5", "23.5", "24.5", "25.5", "26.5"]
            await header.click()
            assert await header.get_attribute("aria-sort") == "descending"
            assert await _column(view, 0) == ["26.5", "25.5", "24.5", "23.5", "22.5"]

            # A bar per row of the numeric series chosen (the first numeric column), in the table's order.
            assert await view.locator("#series option").all_inner_texts() == ["temperature", "humidity"]
            bars = view.locator("#chart rect")
            assert await view.locator("#chart").is_visible() and await bars.count() == 5
            heights = [float(await bars.nth(i).get_attribute("height")) for i in range(5)]
            assert heights == sorted(heights, reverse=True) and heights[0] > heights[-1]
            assert await bars.first.locator("title").text_content() == "sunny: 26.5"  # the first text column names it
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(SCREENSHOT))

            await view.locator("#filter").fill("24.5")
            assert await _column(view, 0) == ["24.5"]
            assert await view.locator("#status").inner_text() == "1 of 5 rows"
            assert await bars.count() == 1
            await view.locator("#filter").fill("SUNNY")  # case-insensitive, on every cell
            assert await body.count() == 5

            methods = [m.get("method") for m in await page.evaluate("window.received")]
            assert methods[:2] == ["ui/initialize", "ui/notifications/initialized"]
            assert "ui/notifications/size-changed" in methods
        finally:
            await browser.close()
    assert SCREENSHOT.stat().st_size > 5_000


async def _column(view: Any, index: int) -> list[str]:
    return await view.locator(f"#table tbody tr td:nth-child({index + 1})").all_inner_texts()


async def test_the_view_shows_an_error_result_as_its_text(demo_url):
    """A failed call (unknown city: the upstream's 404) is the error text, not an empty table."""
    async_playwright = _browser_api()
    async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", demo_url)) as client:
        html = (await client.read_resource(FORECAST_VIEW)).contents[0].text
        failed = await client.call_tool("get_forecast", {"city": "Atlantis"})
    assert failed.is_error
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page()
            await page.set_content(HOST)
            result = json.loads(failed.model_dump_json(by_alias=True, exclude_none=True))
            await page.evaluate("([html, result]) => host(html, {}, {}, result)", [html, result])
            message = page.frame_locator("#view").locator("#message")
            await message.wait_for()
            assert "404" in await message.inner_text()
            assert await page.frame_locator("#view").locator("#table").is_hidden()
        finally:
            await browser.close()
