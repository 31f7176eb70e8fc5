"""Where MCP users find and install servers, and the 2026-07-28 conventions clients and reviewers check:
the MCP Registry's `server.json` (valid against the official schema, kept in tests/data), the README's
`mcp-name` line and the Dockerfile's label, the config's `[registry]` checked key by key; through the
MCP Python SDK client: cache hints on list results, the server info's description, website and icons,
the tools' icons, and `_meta` keys in the reverse-DNS form the specification asks for."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client

from support import DEMO, DEMO_CONFIG, REPO, build_wheel, generate, package_stdio, run_cli, tree_digest
from typed_mcp.config import load_config
from typed_mcp.errors import ConfigError

SCHEMA = json.loads((REPO / "tests" / "data" / "server.schema.2025-12-11.json").read_text())
WEATHER = REPO / "specs" / "weather-api.json"
DAY_MS = 24 * 60 * 60 * 1000
LOGO = "https://weather.example/static/logo.svg"
DOCS = "https://weather.example/docs"
# MCP 2026-07-28, "General fields: _meta": a prefix is dot-separated labels and a slash; one whose
# second label is `mcp` or `modelcontextprotocol` is reserved for the protocol.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
META_KEY = re.compile(rf"^(?P<prefix>{_LABEL}(?:\.{_LABEL})*/)?(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)$")
# Keys the protocol's own parts write: an extension's without a prefix (MCP Apps: `_meta.ui`), and the
# SDK's stamp of the server info on 2026-07-28 results, under the protocol's reserved prefix.
PROTOCOL_KEYS = {"ui", "io.modelcontextprotocol/serverInfo"}


def valid_server_json(path: Path) -> dict:
    """The file, checked against the official schema (draft-07, formats on)."""
    server = json.loads(path.read_text())
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(server), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert server["$schema"] == SCHEMA["$id"]
    return server


def registry_marker_names(readme: str) -> list[str]:
    """The names the MCP Registry's PyPI check accepts from a README: `mcp-name: NAME` (pypi.go)."""
    return re.findall(r"mcp-name: ([A-Za-z0-9._/-]+)", readme)


def test_the_demo_package_lists_itself_for_the_registry():
    """The committed demo (specs/weather-mcp.toml's [registry]): server.json valid against the official
    schema, its package the PyPI distribution with every variable typed-mcp.json lists (one source, the
    MCPB bundle's too), the hosted URL as a remote; the README proves the PyPI package's ownership and the
    Dockerfile the image's."""
    config = load_config(DEMO_CONFIG).config.registry.model_dump()
    manifest = json.loads((DEMO / "typed-mcp.json").read_text())
    server = valid_server_json(DEMO / "server.json")
    assert server["name"] == config["name"] == manifest["registry"]["name"]
    assert server["description"] == "Current weather, forecasts and station reports for a few cities."
    assert server["version"] == manifest["version"] == "1.2.0"
    (package,) = server["packages"]
    assert {k: package[k] for k in ("registryType", "identifier", "version", "runtimeHint", "transport")} == {
        "registryType": "pypi",
        "identifier": "weather-mcp",
        "version": "1.2.0",
        "runtimeHint": "uvx",
        "transport": {"type": "stdio"},
    }
    listed = [(v["name"], v["isSecret"], v["isRequired"], v.get("default")) for v in package["environmentVariables"]]
    expected = [
        (v["name"], bool(v.get("secret")), bool(v.get("required")), v.get("default")) for v in manifest["environment"]
    ]
    assert listed == expected and [name for name, *_ in listed] == [
        "WEATHER_MCP_BASE_URL",
        "WEATHER_MCP_HTTP_BEARER_TOKEN",
    ]
    assert all(v["description"] for v in package["environmentVariables"])
    (remote,) = server["remotes"]
    assert remote["type"] == "streamable-http" and remote["url"] == config["remote_url"]
    assert [h["name"] for h in remote["headers"]] == ["Authorization"] and remote["headers"][0]["isSecret"]

    readme = (DEMO / "README.md").read_text()
    assert registry_marker_names(readme) == [config["name"]]
    assert f"<!-- mcp-name: {config['name']} -->" in readme
    dockerfile = (DEMO / "Dockerfile").read_text()
    assert f'\nLABEL io.modelcontextprotocol.server.name="{config["name"]}"\n' in dockerfile


def test_the_ownership_line_reaches_pypi_as_the_long_description(tmp_path: Path):
    """The registry reads the PyPI JSON API's `info.description`: the wheel's METADATA body."""
    wheel = build_wheel(DEMO, tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert registry_marker_names(metadata) == ["io.github.typed-mcp/weather-mcp"]


def listed_spec(tmp_path: Path, **info) -> Path:
    """The weather spec with a logo, external docs and no server (so the base URL must be given)."""
    spec = json.loads(WEATHER.read_text())
    spec["info"].update({"x-logo": {"url": LOGO}, **info})
    spec["externalDocs"] = {"url": DOCS}
    del spec["servers"]
    path = tmp_path / "listed.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.fixture(scope="module")
def listed(tmp_path_factory) -> Path:
    """A package whose spec gives the listing (description, website, icon); the config only names it."""
    root = tmp_path_factory.mktemp("listed")
    description = "# Weather\n\nThe **weather** of [a few cities](https://weather.example), now. More below."
    spec = listed_spec(root, description=description)
    (root / "typed-mcp.toml").write_text('[registry]\nname = "io.github.example/weather"\n')
    out = root / "weather-mcp"
    generate(spec, out, "weather-mcp", "--config", str(root / "typed-mcp.toml"))
    return out


def test_the_spec_gives_the_listing(listed: Path):
    server = valid_server_json(listed / "server.json")
    assert server["description"] == "The weather of a few cities, now."  # Markdown's first sentence, as text
    assert server["websiteUrl"] == DOCS
    assert server["icons"] == [{"src": LOGO, "mimeType": "image/svg+xml"}]
    base = server["packages"][0]["environmentVariables"][0]
    assert base["name"] == "WEATHER_MCP_BASE_URL" and base["isRequired"] is True and "default" not in base
    assert "remotes" not in server


def server_view(package: Path, mode: str) -> tuple:
    async def run():
        async with Client(package_stdio(package, "weather_mcp"), mode=mode) as client:
            tools = (await client.list_tools()).tools
            return client.server_info, tools

    return anyio.run(run)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 (server/discover) and 2025-11-25 (initialize)
def test_server_info_and_tool_icons_through_the_sdk_client(listed: Path, mode: str):
    info, tools = server_view(listed, mode)
    assert info.description == "The weather of a few cities, now."
    assert info.website_url == DOCS
    assert [(i.src, i.mime_type) for i in info.icons] == [(LOGO, "image/svg+xml")]
    assert tools and all([(i.src, i.mime_type) for i in tool.icons] == [(LOGO, "image/svg+xml")] for tool in tools)


def test_the_config_overrides_the_spec_listing(tmp_path: Path):
    spec = listed_spec(tmp_path, description="From the spec.")
    config = tmp_path / "typed-mcp.toml"
    config.write_text(
        '[registry]\nname = "com.example/weather"\ndescription = "Weather for agents."\n'
        'website_url = "https://example.com/weather"\nicon = "https://example.com/w.png"\n'
        'remote_url = "https://mcp.example.com/mcp"\nremote_auth = "oauth"\n'
    )
    out = tmp_path / "weather-mcp"
    generate(spec, out, "weather-mcp", "--config", str(config))
    server = valid_server_json(out / "server.json")
    assert (server["name"], server["description"], server["websiteUrl"]) == (
        "com.example/weather",
        "Weather for agents.",
        "https://example.com/weather",
    )
    assert server["icons"] == [{"src": "https://example.com/w.png", "mimeType": "image/png"}]
    assert server["remotes"] == [{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}]  # OAuth: no header
    about = (out / "src" / "weather_mcp" / "_about.py").read_text()
    assert 'DESCRIPTION = "Weather for agents."' in about and "https://example.com/w.png" in about


def test_without_a_registry_name_no_server_json_and_the_summary_says_how(tmp_path: Path):
    out = tmp_path / "weather-mcp"
    proc = generate(WEATHER, out, "weather-mcp")
    assert not (out / "server.json").exists()
    assert (
        'MCP Registry: no server.json (to list the server, give the config [registry] name = "io.github.OWNER/NAME")'
        in (proc.stderr)
    )
    assert registry_marker_names((out / "README.md").read_text()) == []
    assert "io.modelcontextprotocol.server.name" not in (out / "Dockerfile").read_text()
    assert "registry" not in json.loads((out / "typed-mcp.json").read_text())
    # The server info comes from the spec all the same.
    assert (
        'DESCRIPTION = "Current weather, forecasts and station reports for a few cities."'
        in (out / "src" / "weather_mcp" / "_about.py").read_text()
    )


@pytest.mark.parametrize(
    ("table", "key", "problem"),
    [
        ('name = "weather-mcp"', "registry.name", "not an MCP Registry name"),
        ('name = "github/weather"', "registry.name", "not an MCP Registry name"),  # one label is no reverse DNS
        ('name = "io.github.x/"', "registry.name", "not an MCP Registry name"),
        ('name = "io.github.x/y -->"', "registry.name", "not an MCP Registry name"),  # would end the README comment
        ('name = "io.github.x/y\\"\\nLABEL a=b"', "registry.name", "not an MCP Registry name"),  # a Dockerfile line
        ('name = "io.github.x/y"\nremote_url = "http://mcp.example.com/mcp"', "registry.remote_url", "https"),
        ('name = "io.github.x/y"\nremote_url = "https://u:p@mcp.example.com/mcp"', "registry.remote_url", "user info"),
        ('remote_url = "https://mcp.example.com/mcp"', "registry.remote_url", "needs registry.name"),
        ('icon = "http://example.com/logo.png"', "registry.icon", "https"),
        ('website_url = "javascript:alert(1)"', "registry.website_url", "not an absolute"),
        (f'description = "{"x" * 101}"', "registry.description", "longer than 100"),
        ('description = "two\\nlines"', "registry.description", "control characters"),
        ('remote_auth = "none"', "registry.remote_auth", "forwarded"),
        ("homepage = 'https://x'", "registry.homepage", "unknown key"),
    ],
)
def test_a_bad_registry_table_is_one_line_naming_the_key(tmp_path: Path, table: str, key: str, problem: str):
    config = tmp_path / "typed-mcp.toml"
    config.write_text(f"[registry]\n{table}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    message = str(raised.value)
    assert message.startswith(f"{config}: {key}: ") and problem in message and "\n" not in message, message


def test_a_bad_registry_table_leaves_the_package_as_it_was(tmp_path: Path):
    package = tmp_path / "weather-mcp"
    shutil.copytree(DEMO, package)
    before = tree_digest(package)
    config = tmp_path / "typed-mcp.toml"
    config.write_text('[registry]\nname = "weather-mcp"\n')
    proc = run_cli("generate", str(WEATHER), "--out", str(package), "--config", str(config), "--no-snapshot")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {config}: registry.name: 'weather-mcp' is not an MCP Registry name: use the reverse-DNS form"
        " io.github.OWNER/NAME (or com.example/NAME for a domain you own)"
    ]
    assert tree_digest(package) == before


@pytest.mark.parametrize(
    ("x_logo", "docs", "warning"),
    [
        ("http://weather.example/logo.png", None, "info.x-logo.url: not an absolute https URL: no icon"),
        ("javascript:alert(1)", None, "info.x-logo.url: not an absolute https URL: no icon"),
        (f"https://weather.example/{'l' * 300}.png", None, "info.x-logo.url: longer than 255 characters: no icon"),
        (None, "https://user:token@docs.example", "externalDocs.url: holds user info"),
    ],
)
def test_spec_urls_that_cannot_be_published_are_left_out(tmp_path: Path, x_logo, docs, warning):
    spec = json.loads(WEATHER.read_text())
    if x_logo is not None:
        spec["info"]["x-logo"] = {"url": x_logo}
    if docs is not None:
        spec["externalDocs"] = {"url": docs}
    out = tmp_path / "weather-mcp"
    proc = generate(spec, out, "weather-mcp")
    assert warning in proc.stderr
    about = (out / "src" / "weather_mcp" / "_about.py").read_text()
    assert "ICONS: list[dict[str, Any]] = []" in about and "WEBSITE_URL = None" in about
    assert "token" not in about


def test_spec_text_never_writes_a_registry_ownership_marker(tmp_path: Path):
    """The registry takes `mcp-name: NAME` anywhere in a PyPI package's README as proof that the package
    belongs to NAME: a spec (untrusted) that wrote one into the README could list its author's registry
    entry as this package. Every spec text the README shows carries one here; only the config's own
    line (or none) survives."""
    marker = "mcp-name: io.github.evil/takeover"
    spec = json.loads(WEATHER.read_text())
    spec["info"]["title"] = f"Weather {marker}"
    spec["info"]["version"] = f"1.2.0 {marker}"
    spec["info"]["description"] = marker
    spec["servers"] = [{"url": f"https://api.example.com/{marker}"}]
    spec["components"]["securitySchemes"]["HTTPBearer"]["description"] = marker
    spec["tags"] = [{"name": marker, "description": marker}]
    for item in spec["paths"].values():
        for op in item.values():
            op.update(summary=f"{op.get('summary', '')} {marker}", tags=[marker])
    spec["paths"][f"/v1/{marker}"] = spec["paths"]["/v1/temperature"]  # in the tools table's operation column
    out = tmp_path / "plain"
    generate(spec, out, "weather-mcp")
    assert registry_marker_names((out / "README.md").read_text()) == []
    config = tmp_path / "typed-mcp.toml"
    config.write_text('[registry]\nname = "io.github.owner/weather"\n')
    generate(spec, tmp_path / "named", "weather-mcp", "--config", str(config))
    assert registry_marker_names((tmp_path / "named" / "README.md").read_text()) == ["io.github.owner/weather"]


def list_results(package: Path, mode: str, *flags: str) -> dict:
    async def run():
        async with Client(package_stdio(package, "weather_mcp", *flags), mode=mode) as client:
            tools = await client.list_tools()
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            read = await client.read_resource(resources.resources[0].uri)
            return {
                "tools/list": tools,
                "resources/list": resources,
                "resources/templates/list": templates,
                "read": read,
            }

    return anyio.run(run)


@pytest.mark.parametrize("flags", [(), ("--discovery",)])
def test_list_results_say_how_long_a_2026_client_may_cache_them(flags: tuple[str, ...]):
    """The catalog, the table views and the schema resources never change while the server runs:
    tools/list, resources/list, resources/templates/list and resources/read say so to a 2026-07-28
    client (a day, for every caller); a 2025-11-25 client gets no such field (the SDK's surface for it)."""
    modern = list_results(DEMO, "auto", *flags)
    for method, result in modern.items():
        assert (result.ttl_ms, result.cache_scope) == (DAY_MS, "public"), method
    for method, result in list_results(DEMO, "legacy", *flags).items():
        assert not {"ttl_ms", "cache_scope"} & result.model_fields_set, method


def test_every_meta_key_is_reverse_dns_and_unreserved():
    """Every `_meta` key the package writes, in tools/list and in results (provenance, discovery's
    call_tool), has the reverse-DNS prefix of the specification's key format, and none is reserved."""

    async def run():
        async with Client(package_stdio(DEMO, "weather_mcp", "--base-url", "http://127.0.0.1:9")) as client:
            tools = (await client.list_tools()).tools
            failed = await client.call_tool("get_weather", {"city": "Paris"})  # refused connection: still provenance
        async with Client(package_stdio(DEMO, "weather_mcp", "--discovery", "--base-url", "http://127.0.0.1:9")) as c:
            via = await c.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
        return [key for tool in tools for key in (tool.meta or {})] + list(failed.meta or {}) + list(via.meta or {})

    keys = set(anyio.run(run))
    assert {"io.github.typed-mcp/operation", "io.github.typed-mcp/source", "io.github.typed-mcp/tool"} <= keys
    for key in keys - PROTOCOL_KEYS:
        match = META_KEY.match(key)
        assert match and match.group("prefix"), key
        labels = match.group("prefix")[:-1].split(".")
        assert len(labels) >= 2 and labels[1] not in ("mcp", "modelcontextprotocol"), key  # reverse DNS, not reserved
