"""Trust by construction (issue 24): operator credentials go only where they are meant to, files
stay where they belong, and an upstream value JSON cannot hold never reaches a result. Through real
generated servers (stdio and streamable HTTP, the MCP SDK client), a scripted upstream on 127.0.0.1
that records what it received, and the real CLI."""

from __future__ import annotations

import base64
import importlib
import json
import os
import shutil
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from support import DEMO, HttpServer, Reply, Seen, generate, import_server, run_cli


def import_module(package: Path, name: str):
    """A module of a generated package, imported in this process."""
    src = str(package / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module(name)


pytestmark = pytest.mark.anyio


MINI = {
    "openapi": "3.0.3",
    "info": {"title": "Mini", "version": "1"},
    "paths": {"/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "ok"}}}}},
}


def _get(op_id: str, **extra) -> dict:
    schema = {"type": "object"}
    return {
        "get": {
            "operationId": op_id,
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
            **extra,
        }
    }


# -- 5. credentials go only where they are meant to ---------------------------------------------------

VAULT = {
    "openapi": "3.0.3",
    "info": {"title": "Vault", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "components": {
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer"},
            "teamKey": {"type": "apiKey", "in": "header", "name": "X-Team"},  # no credential word in it
            "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
            "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "sid"},
        }
    },
    "paths": {
        "/open": _get("get_open"),
        "/bearer": _get("get_bearer", security=[{"bearerAuth": []}]),
        "/team": _get("get_team", security=[{"teamKey": []}]),
        "/query": _get("get_query", security=[{"queryKey": []}]),
        "/cookie": _get("get_cookie", security=[{"sessionCookie": []}]),
    },
}
VAULT_TOOLS = ("get_open", "get_bearer", "get_team", "get_query", "get_cookie")
# The config marks X-Corp a credential (an [auth] scheme names it) and adds a plain header.
VAULT_CONFIG = (
    'headers = {"X-Client" = "typed-mcp-tests"}\n\n'
    '[auth.schemes.corp]\ntype = "apiKey"\nin = "header"\nname = "X-Corp"\n'
)
BASIC_PAIR = ("operator", "op-basic-password")
BASIC = base64.b64encode(":".join(BASIC_PAIR).encode()).decode()
URL_USER = ("urluser", "url-password-secret")
# The operator's environment: every scheme's variable, and <PREFIX>_HEADERS holding credentials
# under every kind of name beside one plain header.
OPERATOR = {
    "VAULT_MCP_BEARER_AUTH_TOKEN": "bearer-secret-value",
    "VAULT_MCP_TEAM_KEY_KEY": "team-scheme-secret",
    "VAULT_MCP_QUERY_KEY_KEY": "query-scheme-secret",
    "VAULT_MCP_SESSION_COOKIE_KEY": "cookie-scheme-secret",
    "VAULT_MCP_HEADERS": "\n".join(
        [
            f"Authorization: Basic {BASIC}",
            "X-Api-Version: 2024-06-01",
            "X-Team: headers-team-secret",  # named by a spec scheme
            "X-Corp: headers-corp-secret",  # named by a config scheme
            "Cookie: opsession=headers-cookie-secret",
            "X-Vendor-Token: headers-vendor-secret",  # says what it is
        ]
    ),
}
# Every form an operator secret can take on the wire or in a message.
SECRETS = (
    "bearer-secret-value",
    "team-scheme-secret",
    "query-scheme-secret",
    "cookie-scheme-secret",
    BASIC,
    BASIC_PAIR[1],
    "headers-team-secret",
    "headers-corp-secret",
    "headers-cookie-secret",
    "headers-vendor-secret",
    URL_USER[1],
    base64.b64encode(":".join(URL_USER).encode()).decode(),
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vault")
    (root / "typed-mcp.toml").write_text(VAULT_CONFIG)
    out = root / "vault-mcp"
    generate(VAULT, out, "vault-mcp", "--config", str(root / "typed-mcp.toml"))
    return out


def _env(package: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_MCP_")}
    return {**clean, **OPERATOR, "PYTHONPATH": str(package / "src")}


def _stdio(package: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "vault_mcp", *flags], env=_env(package))


def _base(upstream: HttpServer, user_info: bool) -> str:
    return upstream.url.replace("://", f"://{':'.join(URL_USER)}@") if user_info else upstream.url


def _leaks(seen: Seen) -> list[str]:
    """Every operator secret (in any form) the upstream received, in a header or the request line."""
    wire = json.dumps([seen.raw_path, seen.all_headers, seen.body.decode("latin-1")])
    return [secret for secret in SECRETS if secret in wire]


def _named(seen: Seen, name: str) -> list[str]:
    return [value for key, value in seen.all_headers if key.lower() == name]


def _assert_nothing_of_the_operators(upstream: HttpServer, authorization: list[str]) -> None:
    assert len(upstream.seen) == len(VAULT_TOOLS)
    for seen in upstream.seen:
        assert _leaks(seen) == [], (seen.raw_path, seen.all_headers)
        assert _named(seen, "authorization") == authorization, seen.all_headers
        for name in ("cookie", "x-team", "x-corp", "x-vendor-token"):
            assert _named(seen, name) == [], (name, seen.all_headers)
        assert "api_key" not in seen.raw_path
        # Headers that carry no credential still go.
        assert _named(seen, "x-api-version") == ["2024-06-01"] and _named(seen, "x-client") == ["typed-mcp-tests"]


@pytest.mark.parametrize("user_info", [False, True], ids=["base-url", "base-url-with-user-info"])
async def test_hole_forwarded_without_http_sends_no_operator_credential(vault, user_info, monkeypatch):
    """Forwarded mode where no HTTP request carries a client credential (the server embedded, as
    the ASGI app builds it from `<PREFIX>_AUTH=forwarded`, called in memory like stdio, where the
    command line refuses the mode): none comes, so none goes."""
    for name, value in {**OPERATOR, "VAULT_MCP_AUTH": "forwarded"}.items():
        monkeypatch.setenv(name, value)
    server_module = import_module(vault, "vault_mcp.server")
    hosting = import_module(vault, "vault_mcp._runtime.hosting")
    selection = import_module(vault, "vault_mcp._runtime.selection")
    with HttpServer() as upstream:
        upstream.default = Reply(200, {})
        monkeypatch.setenv("VAULT_MCP_BASE_URL", _base(upstream, user_info))
        server = server_module.hosted_server(
            hosting.Hosting.from_env("VAULT_MCP", False).auth, selection.Selection(), False
        )
        try:
            async with Client(server) as client:
                results = [await client.call_tool(name, {}) for name in VAULT_TOOLS]
        finally:
            server_module.api.forward_authorization = False
    assert all(not result.is_error for result in results), [r.content for r in results]
    _assert_nothing_of_the_operators(upstream, [])


@pytest.mark.parametrize(
    "client_credential", [None, "Bearer client-own-token"], ids=["no-client-credential", "client-credential"]
)
async def test_hole_forwarded_http_sends_only_the_clients_credential(vault, client_credential):
    """`--auth forwarded` over streamable HTTP: the client's Authorization and nothing of the
    operator's, whether the client brings one or not."""
    with HttpServer() as upstream:
        upstream.default = Reply(200, {})
        port = free_port()
        args = [sys.executable, "-m", "vault_mcp", "--transport", "streamable-http", "--port", str(port)]
        args += ["--auth", "forwarded", "--base-url", _base(upstream, True)]
        with running(args, f"http://127.0.0.1:{port}/health", _env(vault), timeout=120):
            headers = {"Authorization": client_credential} if client_credential else {}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                    results = [await client.call_tool(name, {}) for name in VAULT_TOOLS]
    assert all(not result.is_error for result in results), [r.content for r in results]
    _assert_nothing_of_the_operators(upstream, [client_credential] if client_credential else [])


async def test_hole_operator_headers_are_sent_once_and_redacted_everywhere(vault):
    """Not forwarded: the operator's credentials go (one Authorization: the scheme's wins over
    <PREFIX>_HEADERS'), and an upstream that echoes the request in its error answer shows none of
    them: every configured secret is REDACTED, as a scheme credential is."""

    def echo(seen: Seen) -> Reply:
        return Reply(400, {"path": seen.raw_path, "headers": seen.all_headers, "basic": BASIC_PAIR[1]})

    with HttpServer() as upstream:
        upstream.default = echo
        async with Client(_stdio(vault, "--base-url", _base(upstream, True))) as client:
            results = {name: await client.call_tool(name, {}) for name in VAULT_TOOLS}
    for name, result in results.items():
        text = result.model_dump_json()
        assert result.is_error and "HTTP 400" in result.content[0].text and "REDACTED" in text, text
        assert [secret for secret in SECRETS if secret in text] == [], (name, text)
        assert "urluser" not in result.meta["io.github.typed-mcp/source"]["url"]
    seen = {s.raw_path.split("?")[0]: s for s in upstream.seen}
    # The test's variables are the package's: each scheme's credential did reach the upstream.
    assert _named(seen["/bearer"], "authorization") == ["Bearer bearer-secret-value"]
    assert _named(seen["/team"], "x-team") == ["team-scheme-secret"]
    assert "api_key=query-scheme-secret" in seen["/query"].raw_path
    assert _named(seen["/cookie"], "cookie") == ["opsession=headers-cookie-secret; sid=cookie-scheme-secret"]
    assert _named(seen["/open"], "authorization") == [f"Basic {base64.b64encode(':'.join(URL_USER).encode()).decode()}"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("?access_token=tok-secret-1", "'access_token'"),
        ("?format=json&api_key=tok-secret-1", "'api_key'"),
        ("?X-Amz-Signature=tok-secret-1&X-Amz-Date=20260101", "'X-Amz-Signature'"),
        ("?sv=2024&sig=tok-secret-1", "'sig'"),
        ("#id_token=tok-secret-1", "'id_token'"),
    ],
)
def test_hole_init_refuses_credentials_in_the_spec_urls_query(tmp_path, query, named):
    """The config `init` writes is committed: a credential-looking query (or fragment) parameter is
    refused as user info is, named, its value never shown, nothing written."""
    proc = run_cli("init", f"https://api.example.com/openapi.json{query}", "--package-name", "x-mcp", cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert named in lines[0] and "pass them with -H" in lines[0] and "tok-secret-1" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_keeps_a_query_that_holds_no_credential(tmp_path):
    url = "https://api.example.com/openapi.json?format=json&version=2"
    proc = run_cli("init", url, "--package-name", "x-mcp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f'source = "{url}"' in (tmp_path / "typed-mcp.toml").read_text()


# -- 6. files stay where they belong -------------------------------------------------------------------


def _tree(root: Path) -> dict[str, str]:
    """Every entry under `root`, links and special files included, not followed: what "nothing
    written anywhere" compares."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file" if path.is_file() else "special"
            found[str(path.relative_to(root))] = kind + (":" + path.read_text() if kind == "file" else "")
    return found


def _one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


BUNDLE_TRAPS = {
    # what is planted in a copy of the demo package -> the path the refusal names
    "link-to-a-file": lambda pkg, outside: _link(pkg / "src/weather_mcp/notes.txt", outside / "secret.txt"),
    "link-to-a-folder": lambda pkg, outside: _link(pkg / "src/weather_mcp/extra", outside),
    "fifo": lambda pkg, outside: os.mkfifo(pkg / "src/weather_mcp/pipe") or pkg / "src/weather_mcp/pipe",
    "hard-link": lambda pkg, outside: (
        os.link(outside / "secret.txt", pkg / "src/weather_mcp/notes.txt") or pkg / "src/weather_mcp/notes.txt"
    ),
    "linked-module": lambda pkg, outside: _moved_out(pkg / "src/weather_mcp", outside / "module"),
    "linked-manifest": lambda pkg, outside: _moved_out(pkg / "typed-mcp.json", outside / "typed-mcp.json"),
    "fifo-pyproject": lambda pkg, outside: _fifo_instead(pkg / "pyproject.toml"),
}


def _link(path: Path, target: Path) -> Path:
    path.symlink_to(target)
    return path


def _moved_out(path: Path, elsewhere: Path) -> Path:
    path.rename(elsewhere)
    return _link(path, elsewhere)


def _fifo_instead(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("trap", BUNDLE_TRAPS)
def test_hole_bundle_refuses_links_and_special_files_before_copying(tmp_path, trap):
    """`typed-mcp bundle` takes the package's own regular files only: a symbolic link (to a file, to
    a folder, in place of the module folder or a file it reads), a hard link and a FIFO are each
    refused in one line naming the path, before anything is read from them or written."""
    package, outside = tmp_path / "pkg", tmp_path / "outside"
    shutil.copytree(DEMO, package, ignore=shutil.ignore_patterns("__pycache__"))
    outside.mkdir()
    (outside / "secret.txt").write_text("operator-private-key")
    named = BUNDLE_TRAPS[trap](package, outside)
    before = _tree(tmp_path)
    proc = run_cli("bundle", str(package), "--out", str(tmp_path / "dist" / "weather-mcp.mcpb"))
    line = _one_line(proc)
    assert proc.returncode == 1 and line.startswith(f"error: {named}: "), line
    assert _tree(tmp_path) == before  # no archive, no dist folder, nothing else


CONFINED = [
    ('out = "{outside}/pkg"', "out"),  # absolute
    ('out = "../x"', "out"),
    ('snapshot = "../../site-packages/evil.pth"', "snapshot"),
    ('out = "linked/pkg"', "out"),  # a folder of the repository that is a link out of it
    ('snapshot = "linked/spec.json"', "snapshot"),
    ('snapshot = "specs/spec.json"', "snapshot"),  # a file that is a link out
    ('snapshot = "specs/evil.pth"', "snapshot"),  # a spec file is named like one
    ('snapshot = ".github/workflows/api.yml"', "snapshot"),  # tooling that runs
    ('out = ".git/pkg"', "out"),
    ('out = "."', "out"),  # the repository itself
    ('overlays = ["fix.yaml", "../outside/fix.yaml"]', "overlays.1"),
    ('source = "{outside}/secret.json"', "source"),
    ('source = "linked/secret.json"', "source"),
]


@pytest.fixture
def repository(tmp_path) -> tuple[Path, Path]:
    """A repository with a spec, an overlay, a folder and a file that link out of it, and a folder
    outside it."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "specs").mkdir(parents=True)
    outside.mkdir()
    (repo / "mini.json").write_text(json.dumps(MINI))
    (repo / "fix.yaml").write_text(
        json.dumps({"overlay": "1.0.0", "info": {"title": "f", "version": "1"}, "actions": []})
    )
    (outside / "secret.json").write_text(json.dumps(MINI))
    (outside / "fix.yaml").write_text((repo / "fix.yaml").read_text())
    (repo / "linked").symlink_to(outside)
    (repo / "specs" / "spec.json").symlink_to(outside / "secret.json")
    return repo, outside


@pytest.mark.parametrize(("setting", "key"), CONFINED)
@pytest.mark.parametrize("command", ["generate", "check"])
def test_hole_config_paths_stay_in_the_repository(repository, command, setting, key):
    """Every path typed-mcp.toml names (`out`, `snapshot`, `source`, `overlays`) leads inside the
    config's folder once links are followed, and is not where tooling runs from: otherwise exit 1
    naming the key, nothing written anywhere."""
    repo, outside = repository
    config = repo / "typed-mcp.toml"
    setting = setting.format(outside=outside)
    config.write_text(("" if setting.startswith("source") else 'source = "mini.json"\n') + setting + "\n")
    before = _tree(repo.parent)
    proc = run_cli(command, "--config", str(config))
    line = _one_line(proc)
    assert proc.returncode == 1 and line.startswith(f"error: {config}: {key}: "), line
    assert _tree(repo.parent) == before


def test_config_paths_inside_the_repository_and_the_command_lines_own_are_free(repository):
    """The control: paths inside the repository work; the command line's --out is the user's choice."""
    repo, outside = repository
    config = repo / "typed-mcp.toml"
    config.write_text('source = "mini.json"\nout = "generated/mini-mcp"\nsnapshot = "specs/mini.json"\n')
    proc = run_cli("generate", "--config", str(config), "--no-verify")
    assert proc.returncode == 0, proc.stderr
    assert (repo / "generated/mini-mcp/typed-mcp.json").is_file() and (repo / "specs/mini.json").is_file()
    config.write_text('source = "mini.json"\n')
    proc = run_cli("generate", "--config", str(config), "--out", str(outside / "cli-pkg"), "--no-verify")
    assert proc.returncode == 0 and (outside / "cli-pkg/typed-mcp.json").is_file(), proc.stderr


@pytest.mark.parametrize("out", ["/", "a-file"])
def test_an_output_that_is_a_file_or_the_root_is_refused(tmp_path, out):
    (tmp_path / "a-file").write_text("mine")
    (tmp_path / "mini.json").write_text(json.dumps(MINI))
    before = _tree(tmp_path)
    proc = run_cli("generate", str(tmp_path / "mini.json"), "--out", out if out == "/" else str(tmp_path / out))
    line = _one_line(proc)
    assert proc.returncode == 6 and ("refusing to replace" in line or "is not a folder" in line), line
    assert _tree(tmp_path) == before


# -- 8a. NaN and Infinity from upstream ----------------------------------------------------------------

NUMBERS = {
    "type": "object",
    "properties": {
        "value": {"type": "number"},
        "values": {"type": "array", "items": {"type": "number"}},
        "by_name": {"type": "object", "additionalProperties": {"type": "number"}},
    },
}
GAUGE = {
    "openapi": "3.0.3",
    "info": {"title": "Gauge", "version": "1"},
    "paths": {
        "/reading": {
            "get": {
                "operationId": "get_reading",
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": NUMBERS}}}},
            }
        },
        "/lenient": {
            "get": {
                "operationId": "get_lenient",
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": NUMBERS}}}},
            }
        },
        "/free": {
            "get": {
                "operationId": "get_free",
                "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
            }
        },
        "/readings": {
            "get": {
                "operationId": "get_readings",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "array", "items": NUMBERS}}},
                    }
                },
            }
        },
    },
}
# Where the value sits in each answer (under the first reading of a list answer), by its JSON text.
PLACES = {
    "value": '{{"value": {}, "values": [], "by_name": {{}}}}',
    "values.1": '{{"value": 1, "values": [1.5, {}], "by_name": {{}}}}',
    "by_name.b": '{{"value": 1, "values": [], "by_name": {{"a": 2, "b": {}}}}}',
}
NOT_JSON = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400")


@pytest.fixture(scope="module")
def gauges(tmp_path_factory) -> dict[str, Path]:
    """The default profile (with `get_lenient` on the text policy) and the data-tools profile."""
    root = tmp_path_factory.mktemp("gauge")
    (root / "typed-mcp.toml").write_text('[operations.get_lenient]\non_mismatch = "text"\n')
    default, data = root / "gauge-mcp", root / "gauge-data-mcp"
    generate(GAUGE, default, "gauge-mcp", "--config", str(root / "typed-mcp.toml"))
    generate(GAUGE, data, "gauge-data-mcp", "--profile", "data-tools")
    return {"gauge_mcp": default, "gauge_data_mcp": data}


@pytest.mark.parametrize(
    ("module", "tool", "prefix"),
    [
        ("gauge_mcp", "get_reading", ""),
        ("gauge_mcp", "get_lenient", ""),  # on_mismatch = "text": not JSON is still an error
        ("gauge_mcp", "get_free", ""),  # no schema: JSON all the same
        ("gauge_mcp", "get_readings", "result.0."),  # a list answer is wrapped
        ("gauge_data_mcp", "get_reading", "data."),
        ("gauge_data_mcp", "get_readings", "data.0."),
    ],
)
async def test_hole_non_json_numbers_are_an_error_naming_the_field(gauges, module, tool, prefix, monkeypatch):
    """NaN, Infinity, -Infinity and numbers past a double, in an object, a list and a map: an
    isError naming where the value sits, never a result whose structuredContent says null."""
    server = import_server(gauges[module], module)
    path = "/" + tool.removeprefix("get_")
    wrong: list[str] = []
    with HttpServer() as upstream:
        monkeypatch.setenv(f"{module.upper()}_BASE_URL", upstream.url)
        async with Client(server) as client:
            for place, body in PLACES.items():
                for token in NOT_JSON:
                    text = body.format(token)
                    upstream.routes[path] = Reply(200, f"[{text}]" if tool == "get_readings" else text)
                    result = await client.call_tool(tool, {})
                    said = result.content[0].text if result.content else ""
                    if not (result.is_error and f"{prefix}{place}: {token} is not a JSON number" in said):
                        wrong.append(f"{place} {token}: is_error={result.is_error} {said[:160]!r}")
            upstream.routes[path] = Reply(200, PLACES["value"].format("1e308") if tool != "get_readings" else "[]")
            fine = await client.call_tool(tool, {})  # the largest doubles are numbers like any other
    assert wrong == [], "\n".join(wrong)
    assert not fine.is_error, fine.content
