"""Runtime toolsets (--toolsets, --tools, --read-only) and discovery mode (--discovery), through real
clients (the MCP Python SDK's and the strict TypeScript SDK's) over stdio, against the live demo API.

The demo's spec has no tags, so the toolset tests use a package generated from it with two tags added
(`Weather Data` on the weather reads, `Station Reports` on the reports)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from harness.node_tools import INVALID_PARAMS, INVALID_REQUEST, TS1, TS2_MODERN, run_ts_client
from harness.runtime_loader import runtime
from support import CORPUS, REPO, WEATHER_TOOLS, generate, package_stdio
from support import LONDON_REPORT as REPORT

pytestmark = pytest.mark.anyio

WEATHER_SPEC = REPO / "specs" / "weather-api.json"
COMMITTED = REPO / "generated" / "weather-mcp"
TOKEN_ENV = "WEATHER_MCP_HTTP_BEARER_TOKEN"
ALL = list(WEATHER_TOOLS)
READINGS = ["get_temperature", "get_weather", "get_forecast", "get_temperatures", "get_history"]
EXPORTS = ["start_export", "get_export", "cancel_export"]  # tagged "Weather Data" too (`tagged`)
WEATHER_DATA = [*READINGS, *EXPORTS]
STATION_REPORTS = ["create_report", "get_report", "delete_report", "upload_attachment", "put_station_photo"]
READ_ONLY = [*READINGS, "get_report", "get_export"]
DISCOVERY = ["search_tools", "list_toolsets", "describe_tool", "call_tool"]
# Calls whose results are the same every time (the upstream's reads, its errors, argument errors).
SAME_EVERY_TIME = [
    {"name": "get_temperature", "arguments": {"city": "London"}},
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}},
    {"name": "get_temperatures", "arguments": {"cities": ["London", "Paris"]}},
    {"name": "get_report", "arguments": {"report_id": 987654}},  # 404: an isError result
    {"name": "delete_report", "arguments": {"report_id": 987654}},
    {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 99}},  # invalid: the SDK's validation error
    {"name": "get_weather", "arguments": {}},  # a required argument missing
]


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    spec = json.loads(WEATHER_SPEC.read_text())
    for path, item in spec["paths"].items():
        for operation in item.values():
            station = path.startswith(("/v1/reports", "/v1/attachments", "/v1/stations"))
            operation["tags"] = ["Station Reports"] if station else ["Weather Data"]
    out = tmp_path_factory.mktemp("tagged") / "weather-mcp"
    generate(spec, out, "weather-mcp")
    return out


def command(package: Path, base_url: str | None, *flags: str) -> tuple[list[str], dict[str, str]]:
    args = [sys.executable, "-m", "weather_mcp", *(["--base-url", base_url] if base_url else []), *flags]
    return args, {"PYTHONPATH": str(package / "src"), TOKEN_ENV: "demo-token"}


def stdio(package: Path, base_url: str | None, *flags: str, **env: str) -> StdioServerParameters:
    args, extra = command(package, base_url, *flags)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    return StdioServerParameters(command=args[0], args=args[1:], env={**clean, **extra, **env})


def dump(result: Any) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def without_tool_meta(result: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in result.get("_meta", {}).items() if k != "io.github.typed-mcp/tool"}
    return {**result, "_meta": meta}


def masked(result: dict[str, Any]) -> dict[str, Any]:
    """A create_report result without what differs between two reports: their id and arrival time."""
    out = json.loads(json.dumps(result))
    for value in [out.get("structuredContent") or {}]:
        for key in ("id", "received_at"):
            value.pop(key, None)
    out["content"] = [{**c, "text": "<masked>"} for c in out["content"]]
    return out


# --- the package records its toolsets ---------------------------------------------------------------


def test_toolsets_are_the_tags_in_snake_case(tagged):
    namespace: dict[str, Any] = {}
    exec((tagged / "src/weather_mcp/tools/__init__.py").read_text(), namespace)
    assert namespace["TOOLSETS"] == {"station_reports": tuple(STATION_REPORTS), "weather_data": tuple(WEATHER_DATA)}
    namespace = {}
    exec((COMMITTED / "src/weather_mcp/tools/__init__.py").read_text(), namespace)
    assert namespace["TOOLSETS"] == {}  # the demo's spec has no tags


# --- selection: which tools are listed, and what the others answer ---------------------------------------


@pytest.mark.parametrize(
    ("flags", "env", "listed"),
    [
        ((), {}, ALL),
        (("--toolsets", "weather_data"), {}, WEATHER_DATA),
        (("--toolsets", "station_reports", "--tools", "get_weather"), {}, ["get_weather", *STATION_REPORTS]),
        (("--tools", "get_report,delete_report"), {}, ["get_report", "delete_report"]),
        (("--read-only",), {}, READ_ONLY),
        (("--toolsets", "station_reports", "--read-only"), {}, ["get_report"]),
        ((), {"WEATHER_MCP_TOOLSETS": "station_reports"}, STATION_REPORTS),
        ((), {"WEATHER_MCP_TOOLS": "get_forecast"}, ["get_forecast"]),
        ((), {"WEATHER_MCP_READ_ONLY": "true"}, READ_ONLY),
        (("--toolsets", "weather_data"), {"WEATHER_MCP_TOOLSETS": "station_reports"}, WEATHER_DATA),  # the flag wins
    ],
)
async def test_the_selection_is_what_tools_list_shows(tagged, demo_url, flags, env, listed):
    async with Client(stdio(tagged, demo_url, *flags, **env)) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == listed  # in the order of the spec
        result = await client.call_tool(
            listed[-1], {"report_id": 987654} if "report" in listed[-1] else {"city": "Oslo"}
        )
        assert "not enabled" not in result.content[0].text


async def test_an_unselected_tool_is_a_clear_error(tagged, demo_url):
    async with Client(stdio(tagged, demo_url, "--toolsets", "weather_data")) as client:
        result = await client.call_tool("create_report", {"body": REPORT})
        assert result.is_error and result.structured_content is None
        assert result.content[0].text == (
            "tool 'create_report' is not enabled on this server: start the server with --tools create_report "
            "(or WEATHER_MCP_TOOLS) or --toolsets station_reports (or WEATHER_MCP_TOOLSETS)"
        )
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and "no_such_tool" in unknown.content[0].text
    async with Client(stdio(tagged, demo_url, "--read-only")) as client:
        result = await client.call_tool("delete_report", {"report_id": 1})
        assert result.is_error
        assert result.content[0].text == (
            "tool 'delete_report' is not enabled on this server: it is not read-only: "
            "start the server without --read-only (or WEATHER_MCP_READ_ONLY)"
        )


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        (
            ("--toolsets", "weather,station_reports"),
            {},
            "unknown toolset 'weather' (did you mean weather_data?); valid toolsets: station_reports, weather_data",
        ),
        (
            ("--tools", "get_wether"),
            {},
            "unknown tool 'get_wether' (did you mean get_weather, get_export?); valid tools: " + ", ".join(ALL),
        ),
        ((), {"WEATHER_MCP_TOOLSETS": "nope"}, "unknown toolset 'nope'; valid toolsets: station_reports, weather_data"),
        ((), {"WEATHER_MCP_DISCOVERY": "maybe"}, "WEATHER_MCP_DISCOVERY='maybe': use 1/true/yes/on or 0/false/no/off"),
    ],
)
def test_an_unknown_name_fails_at_start_with_one_line(tagged, flags, env, message):
    args, extra = command(tagged, None, *flags)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    proc = subprocess.run(
        args, env={**clean, **extra, **env}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"weather_mcp: error: {message}\n"


# --- discovery mode ------------------------------------------------------------------------------------


async def test_discovery_serves_four_small_tools_and_describes_each_tool_as_full_mode_lists_it(
    weather_package, demo_url
):
    async with Client(stdio(weather_package, demo_url)) as client:
        full = {t.name: dump(t) for t in (await client.list_tools()).tools}
    async with Client(stdio(weather_package, demo_url, "--discovery")) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == DISCOVERY
        assert len(json.dumps([dump(t) for t in listed])) < 4096
        assert listed[-1].output_schema is None  # call_tool returns other tools' results, any of them
        for name, definition in full.items():
            described = await client.call_tool("describe_tool", {"name": name})
            assert not described.is_error and described.structured_content == definition
        missing = await client.call_tool("describe_tool", {"name": "get_wether"})
        assert missing.is_error and "unknown tool 'get_wether'" in missing.content[0].text
        direct = await client.call_tool("get_weather", {"city": "Paris"})  # listed tools only
        assert direct.is_error and "call it with call_tool" in direct.content[0].text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("forecast for the next few days", "get_forecast"),
        ("submit a station report", "create_report"),
        ("remove a stored report", "delete_report"),
        ("temperature in several cities", "get_temperatures"),
        ("current weather in Paris", "get_weather"),
    ],
)
async def test_search_finds_the_tool(weather_package, demo_url, query, expected):
    async with Client(stdio(weather_package, demo_url, "--discovery")) as client:
        result = await client.call_tool("search_tools", {"query": query, "limit": 3})
    assert not result.is_error
    found = result.structured_content["tools"]
    assert found[0]["name"] == expected, found
    assert set(found[0]) == {"name", "title", "operation", "description", "toolset"}
    assert len(found[0]["description"]) <= 160


def runtime_search():
    """The runtime's search module, loaded from the templates (it is copied verbatim into packages)."""
    return runtime("search")


def search_doc(tool: str, **columns: str) -> dict[str, str]:
    search = runtime_search()
    return {"tool": tool, "sentence": "", "about": "", **dict.fromkeys(search.COLUMNS, ""), **columns}


def test_search_ranks_by_the_concepts_a_tool_names():
    """A tool naming two of the things asked for beats one that repeats one rare word of the query."""
    search = runtime_search()
    docs = [
        search_doc("flags_get", name="beta flags get", title="Get the beta flag", path="beta flags", params="beta"),
        search_doc("pulls_create", name="pulls create", title="Create a pull request", intent="create add new"),
        *(search_doc(f"create_{n}", name=f"create other {n}", title="Create a pull thing") for n in range(30)),
    ]
    found = [hit["name"] for hit in search.SearchIndex(docs).search("create a pull request for the beta", 3)]
    assert found[0] == "pulls_create", found


def test_search_looks_for_a_word_no_name_holds_in_the_descriptions():
    """A word of the request that no tool's name, title or path holds is looked for in the
    descriptions; a word the names hold is not: a description repeating it does not outrank them."""
    search = runtime_search()
    docs = [
        search_doc("get_status", name="get status", title="Get the status", about="Whether the service is up."),
        search_doc("ping", name="ping", title="Ping", about="A heartbeat for load balancers: answers when alive."),
        *(search_doc(f"list_{n}", name=f"list things {n}", title="List things", path="things") for n in range(30)),
        search_doc("noisy", name="noisy", title="Noisy", about="status status status of every status"),
    ]
    index = search.SearchIndex(docs)
    assert [hit["name"] for hit in index.search("send a heartbeat", 2)][0] == "ping"
    assert [hit["name"] for hit in index.search("is it alive and well", 2)][0] == "ping"
    assert [hit["name"] for hit in index.search("get the status", 2)][0] == "get_status"


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("host the docs site", None, "pages_delete"),  # no removal asked for: the removal comes last
        ("take the docs site down", None, "pages_delete"),  # "take down" holds no removal word
        ("remove the docs site", "pages_delete", None),
        ("drop the docs site", "pages_delete", None),
        ("is the docs site up?", "pages_get", "pages_delete"),  # a question is answered by a read
        ("which docs site is live", "pages_get", "pages_delete"),
    ],
)
def test_search_prefers_the_kind_of_tool_the_request_asks_for(query, first, last):
    """Among tools that hold as many of the query's concepts, a removal is first only when a removal
    is asked for, and a question is answered by a read: the tie is not left to bm25's word counts."""
    search = runtime_search()
    kinds = {"delete": "delete remove revoke", "create": "create add", "update": "update set", "get": "get show"}
    docs = [  # every tool holds the same concepts; the removal repeats them, so bm25 alone puts it first
        search_doc(
            f"pages_{kind}",
            name=f"pages {kind}",
            title="the docs site, docs site" if kind == "delete" else "a site",
            path="docs site",
            intent=intent,
        )
        for kind, intent in kinds.items()
    ]
    found = [hit["name"] for hit in search.SearchIndex(docs).search(query, 4)]
    assert len(found) == 4, found
    assert first is None or found[0] == first, found
    assert last is None or found[-1] == last, found


@pytest.mark.parametrize(
    ("query", "absent", "present"),
    [
        ("open a PR from feature/login into main", {"feature", "login"}, {"pull"}),
        ("who has starred octo/widgets", {"octo", "widgets"}, {"starred"}),
        ("throttle /login to 5 requests", {"login"}, {"throttle"}),
        ("read package.json from the main branch", {"package", "json"}, {"file"}),
        ("rename the 'sessions-old' store", {"sessions", "old"}, {"store"}),
        ("squash and merge #118", {"118"}, {"number", "merge"}),
    ],
)
def test_search_reads_values_as_what_they_are(query, absent, present):
    """Paths, branches, `owner/name`, file names and quoted text are arguments, not words of the request
    (with GitHub's own vocabulary, in which a PR is a pull request)."""
    search = runtime_search()
    terms = {term for group in search.concepts(query, search.THESAURUS.extended({"pull": ["pr"]})) for term in group}
    assert not terms & absent and present <= terms, terms


async def test_search_arguments_and_fts5_syntax(weather_package, demo_url):
    async with Client(stdio(weather_package, demo_url, "--discovery")) as client:
        for query in ['"', "NEAR(a b) OR *", "AND", "", "the of a"]:  # nothing in a query is FTS5 syntax
            result = await client.call_tool("search_tools", {"query": query})
            assert not result.is_error and isinstance(result.structured_content["tools"], list), query
        bad = await client.call_tool("search_tools", {"query": "x", "limit": 0})
        assert bad.is_error and "limit" in bad.content[0].text


async def test_call_tool_returns_exactly_what_the_tool_returns(weather_package, demo_url):
    """Each call through call_tool in discovery mode and directly in full mode, against the demo API."""
    async with Client(stdio(weather_package, demo_url)) as client:
        direct = [dump(await client.call_tool(c["name"], c["arguments"])) for c in SAME_EVERY_TIME]
        created = dump(await client.call_tool("create_report", {"body": REPORT}))
    async with Client(stdio(weather_package, demo_url, "--discovery")) as client:
        via = [dump(await client.call_tool("call_tool", c)) for c in SAME_EVERY_TIME]
        via_created = dump(
            await client.call_tool("call_tool", {"name": "create_report", "arguments": {"body": REPORT}})
        )
    assert [r.get("isError", False) for r in direct] == [False] * 4 + [True] * 4
    for call, a, b in zip(SAME_EVERY_TIME, direct, via, strict=True):
        assert b["_meta"]["io.github.typed-mcp/tool"] == call["name"]
        assert without_tool_meta(b) == {**a, "_meta": a.get("_meta", {})}, call
    assert not created.get("isError") and via_created["_meta"]["io.github.typed-mcp/tool"] == "create_report"
    assert masked(without_tool_meta(via_created)) == masked(created)


async def test_discovery_covers_the_selected_tools_only(tagged, demo_url):
    async with Client(stdio(tagged, demo_url, "--discovery", "--toolsets", "station_reports")) as client:
        found = await client.call_tool("search_tools", {"query": "weather temperature forecast report", "limit": 10})
        assert {t["name"] for t in found.structured_content["tools"]} <= set(STATION_REPORTS)
        refused = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
        assert refused.is_error and refused.content[0].text.startswith("tool 'get_weather' is not enabled")
        described = await client.call_tool("describe_tool", {"name": "get_weather"})
        assert described.is_error and "--toolsets weather_data" in described.content[0].text
        ok = await client.call_tool("call_tool", {"name": "get_report", "arguments": {"report_id": 987654}})
        assert ok.is_error and "404" in ok.content[0].text  # the tool's own answer: the upstream's 404


# --- the strict TypeScript clients, in every mode ----------------------------------------------------------------

# Both SDK lines: 1.x on the initialize handshake, 2.x on 2026-07-28 (its 2020-12 AJV is the same on
# the handshake, which tests/e2e/test_ts_client.py runs too).
BOTH_LINES = pytest.mark.parametrize("client", [TS1, TS2_MODERN], ids=lambda c: c.id)


def strict_failures(run: dict[str, Any]) -> list[Any]:
    return [
        (r["name"], r["errorCode"], r["error"])
        for r in run["results"]
        if r["errorCode"] in (INVALID_PARAMS, INVALID_REQUEST)
    ]


def mode_cases() -> list[Any]:
    """Every mode through both lines; make test runs each mode's error result through one line (the
    selection is the server's: tests above check it through the Python client in every mode)."""
    modes = [((), ALL), (("--toolsets", "weather_data"), WEATHER_DATA), (("--read-only",), READ_ONLY)]
    in_ci = {((), TS1), ((), TS2_MODERN), (modes[1][0], TS1), (modes[2][0], TS2_MODERN)}
    return [
        pytest.param(
            flags,
            listed,
            client,
            id=f"{client.id}-{'-'.join(flags) or 'all'}",
            marks=[] if (flags, client) in in_ci else [pytest.mark.long],
        )
        for flags, listed in modes
        for client in (TS1, TS2_MODERN)
    ]


@pytest.mark.parametrize(("flags", "listed", "client"), mode_cases())
def test_typescript_client_in_full_toolset_and_read_only_modes(tagged, demo_url, flags, listed, client):
    calls = [*SAME_EVERY_TIME, {"name": "create_report", "arguments": {"body": REPORT}}]
    args, env = command(tagged, demo_url, *flags)
    run = run_ts_client(args, env, calls, dump_tools=True, client=client)
    assert [t["name"] for t in run["tool_list"]] == listed
    assert strict_failures(run) == []
    for call, result in zip(calls, run["results"], strict=True):
        assert result["ok"], result
        if call["name"] not in listed:
            assert result["isError"] and "is not enabled on this server" in result["text"]


@BOTH_LINES
def test_typescript_client_in_discovery_mode(weather_package, demo_url, client):
    """The strict client accepts every result of the three tools (call_tool's included, with or
    without structuredContent, errors too), and they are the full mode's results."""
    ids = [stored_report(demo_url) for _ in range(2)]  # one to delete in each mode: a 204, no structuredContent
    calls = [*SAME_EVERY_TIME, {"name": "delete_report", "arguments": {"report_id": ids[0]}}]
    args, env = command(weather_package, demo_url)
    full = run_ts_client(args, env, calls, client=client)
    calls[-1] = {"name": "delete_report", "arguments": {"report_id": ids[1]}}
    args, env = command(weather_package, demo_url, "--discovery")
    meta_calls = [
        {"name": "search_tools", "arguments": {"query": "forecast for the coming days"}},
        {"name": "list_toolsets", "arguments": {}},
        {"name": "search_tools", "arguments": {"query": "", "toolset": "untagged", "limit": 2}},
        {"name": "describe_tool", "arguments": {"name": "delete_report"}},
        {"name": "describe_tool", "arguments": {"name": "nope"}},
        *({"name": "call_tool", "arguments": call} for call in calls),
    ]
    run = run_ts_client(args, env, meta_calls, dump_tools=True, client=client)
    assert [t["name"] for t in run["tool_list"]] == DISCOVERY and run["listed_bytes"] < 4096
    assert strict_failures(run) == [] and all(r["ok"] for r in run["results"]), run["results"]
    search, toolsets, listing, described, missing, *via = run["results"]
    assert search["structuredContent"]["tools"][0]["name"] == "get_forecast"
    assert [t["name"] for t in toolsets["structuredContent"]["toolsets"]] == ["untagged"]
    assert [t["name"] for t in listing["structuredContent"]["tools"]] == ALL[:2]
    assert described["structuredContent"]["name"] == "delete_report" and missing["isError"]
    assert not full["results"][-1]["isError"] and full["results"][-1]["structuredContent"] is None
    for call, a, b in zip(calls, full["results"], via, strict=True):
        assert (b["isError"], b["structuredContent"], b["text"]) == (a["isError"], a["structuredContent"], a["text"])
        assert b["meta"]["io.github.typed-mcp/tool"] == call["name"]


def stored_report(base_url: str) -> int:
    reply = httpx.post(f"{base_url}/v1/reports", json=REPORT, headers={"Authorization": "Bearer demo-token"})
    reply.raise_for_status()
    return reply.json()["id"]


# --- a big API ---------------------------------------------------------------------------------------------

GITHUB = CORPUS / "github__api.github.com.json"
DEV_TASKS = REPO / "bench" / "search_tasks" / "dev-github.json"


def corpus_package(tmp_path_factory, spec: str, package: str) -> Path:
    if not (CORPUS / spec).is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    out = tmp_path_factory.mktemp(package) / package
    generate(CORPUS / spec, out, package, "--no-verify")
    return out


@pytest.fixture(scope="module")
def github_package(searched_packages) -> Path:
    return searched_packages("github")


@pytest.mark.long  # GitHub's 1,223 operations generated first: a minute or more on 2 cores
def test_github_discovery_listing_stays_under_4_kb_and_search_finds_tools(github_package):
    env = {"PYTHONPATH": str(github_package / "src")}
    run = run_ts_client(
        [sys.executable, "-m", "github_mcp", "--discovery"],
        env,
        [
            {"name": "search_tools", "arguments": {"query": "merge a pull request", "limit": 5}},
            {"name": "describe_tool", "arguments": {"name": "pulls_merge"}},
            {"name": "search_tools", "arguments": {"query": "List pull requests", "limit": 3}},
            {"name": "list_toolsets", "arguments": {}},
            {"name": "list_toolsets", "arguments": {"toolset": "repos"}},
            {"name": "search_tools", "arguments": {"query": "protect the main branch", "toolset": "repos.branches"}},
        ],
        dump_tools=True,
    )
    assert run["tools"] == 4 and run["listed_bytes"] < 4096, run["listed_bytes"]
    assert len(json.dumps(run["tool_list"]).encode()) < 4096
    assert strict_failures(run) == [] and all(r["ok"] and not r["isError"] for r in run["results"])
    merge, described, pulls, toolsets, repos, branches = (r["structuredContent"] for r in run["results"])
    assert "pulls_merge" in [t["name"] for t in merge["tools"]]
    assert described["inputSchema"]["required"] == ["owner", "repo", "pull_number"]
    assert pulls["tools"][0]["name"] == "pulls_list"  # the example: not in the first ten before
    for page in (toolsets, repos):  # each page of the listing is under 4 KB, text and structuredContent
        assert len(json.dumps(page, ensure_ascii=False).encode()) < 4096
    assert "repos" in {t["name"] for t in toolsets["toolsets"]} or "next_cursor" in toolsets
    assert {t["name"] for t in repos["toolsets"]} >= {"repos.branches", "repos.repos"}
    assert all(t["tools"] <= 60 for t in repos["toolsets"])
    assert {t["toolset"] for t in branches["tools"]} == {"repos.branches"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "search_quality.py"), str(github_package), str(DEV_TASKS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    top5 = int(re.search(r"top-5 (\d+)/10", proc.stdout).group(1))
    assert top5 >= 8, proc.stdout  # 9 before the search documents and thesaurus of 2026-12 (8 since)


CLOUDFLARE = CORPUS / "cloudflare__openapi.json"
TASKS = REPO / "bench" / "search_tasks"


# The specs of the search task sets (bench/search_tasks), beside GitHub's.
SEARCHED = {
    "github": GITHUB.name,
    "cloudflare": CLOUDFLARE.name,
    "gitlab": "apisguru__gitlab.com.json",
    "zoom": "apisguru__zoom.us.json",
    "box": "box__openapi.json",
    "openai": "openai__openapi.yaml",
}


@pytest.fixture(scope="module")
def searched_packages(tmp_path_factory) -> Callable[[str], Path]:
    """The package of a task set's API, generated once for the module."""
    made: dict[str, Path] = {}

    def package(api: str) -> Path:
        if api not in made:
            made[api] = corpus_package(tmp_path_factory, SEARCHED[api], f"{api}-mcp")
        return made[api]

    return package


def search_quality_output(package: Path, tasks: Path) -> str:
    """What bench/search_quality.py prints for `tasks` over `package`."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "search_quality.py"), str(package), str(tasks)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def search_quality(package: Path, tasks: Path) -> tuple[int, int, int, float, int]:
    """bench/search_quality.py's figures: top-1 and top-5 hits, tasks, median search milliseconds, and
    the tasks one search plus one browse finds."""
    output = search_quality_output(package, tasks)
    found = re.search(r"top-1 (\d+)/(\d+) .*top-5 (\d+)/\d+ .*median search ([\d.]+) ms", output)
    browsed = re.search(r"one search plus one browse (\d+)/", output)
    assert found and browsed, output
    return int(found[1]), int(found[3]), int(found[2]), float(found[4]), int(browsed[1])


@pytest.mark.long
@pytest.mark.parametrize(
    ("api", "tasks", "least_top1", "least_top5", "least_browsed"),
    [  # measured 2026-12-01 (session 10), a margin below; blind2 was never tuned on (blind, since 19:10, was).
        # One search plus one browse: measured 2026-12-05 with the results' places 6 to 10 offering other
        # toolsets (before it: 67, 48, 31, 36, 30, 25, 20, 26), one below; with small tags gathered into one
        # toolset (2026-12-06, session 48): Cloudflare 50 -> 58, GitLab 37 -> 38, Box 21 -> 24.
        ("github", "github.json", 26, 50, 70),  # 28/82, 52/82, 71/82
        # 18/72, 32/72 before the known-item tier (eff4366); 15/72, 33/72 after it (2026-12-02)
        ("cloudflare", "cloudflare.json", 13, 30, 57),  # browse 58/72
        ("github", "blind/github.json", 13, 20, 33),  # 15/40, 22/40, 34/40
        ("gitlab", "blind/gitlab.json", 7, 20, 37),  # 9/40, 22/40, 38/40
        ("zoom", "blind/zoom.json", 9, 15, 31),  # 11/40, 17/40, 32/40
        ("github", "blind2/github.json", 10, 19, 25),  # 12/30, 21/30, 26/30
        ("box", "blind2/box.json", 5, 12, 23),  # 7/30, 14/30, 24/30
        ("openai", "blind2/openai.json", 3, 12, 27),  # 5/30, 14/30, 28/30
        # Plain requests (not blind; 2026-12-06, with the path a short request names first: 30/40, 38/40,
        # 40/40; before it 28, 35, 40): the target is 90% in the top 5.
        ("github", "direct/github.json", 27, 36, 39),
    ],
)
def test_search_quality_on_the_committed_task_sets(
    searched_packages, api, tasks, least_top1, least_top5, least_browsed
):
    """Ranking floors (the search's speed is `make bench`'s to print, beside the peer's)."""
    package = searched_packages(api)
    top1, top5, count, _median_ms, browsed = search_quality(package, TASKS / tasks)
    assert top1 >= least_top1 and top5 >= least_top5 and browsed >= least_browsed, (top1, top5, browsed, count)


@pytest.mark.long
def test_within_two_searches_on_the_blind_set_of_three_phrasings(searched_packages):
    """blind3/github.json (never tuned on): the user's words, or else the agent's rephrasing in the
    API's nouns, put the operation in the top 5 for 36 of 40 tasks (2026-12-04); the floor is a
    margin below."""
    output = search_quality_output(searched_packages("github"), TASKS / "blind3" / "github.json")
    found = re.search(r"within two searches \(the user's words, then the agent's, top 5\): (\d+)/(\d+)", output)
    assert found and int(found[2]) == 40, output
    assert int(found[1]) >= 34, output


@pytest.mark.long
@pytest.mark.parametrize("api", ["github", "cloudflare"])
async def test_list_toolsets_of_the_biggest_apis_pages_under_4_kb(searched_packages, api):
    """GitHub (47 tags, 1,223 tools) and Cloudflare (289 tags, 1,511 tools) through the SDK client: the
    discovery listing and every page of list_toolsets, at the top and under each split toolset, are
    under 4 KB; the pages hold every toolset of the package's search.json once."""
    package = searched_packages(api)
    module = json.loads((package / "typed-mcp.json").read_text())["module"]
    expected = [t["name"] for t in json.loads((package / "src" / module / "search.json").read_text())["toolsets"]]
    seen: list[str] = []
    async with Client(package_stdio(package, module, "--discovery")) as client:
        listed = (await client.list_tools()).tools
        assert len(json.dumps([dump(t) for t in listed]).encode()) < 4096

        async def pages(arguments: dict[str, Any]) -> list[dict[str, Any]]:
            found, cursor = [], None
            while True:
                result = await client.call_tool(
                    "list_toolsets", {**arguments, **({"cursor": cursor} if cursor else {})}
                )
                assert not result.is_error and len(result.content[0].text.encode()) < 4096
                found += result.structured_content["toolsets"]
                cursor = result.structured_content.get("next_cursor")
                if cursor is None:
                    return found

        for top in await pages({}):
            seen.append(top["name"])
            if "toolsets" in top:
                seen += [t["name"] for t in await pages({"toolset": top["name"]})]
    assert sorted(seen) == sorted(expected)
