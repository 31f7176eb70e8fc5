"""Real open-source REST servers from PyPI, run on 127.0.0.1 from their own venv (`.venv-live`,
installed by the Makefile from tests/live/requirements.txt), so the tests generate from a live spec
and check each tool's answer against the same server's REST answer.

Kinto and Chroma share the venv: chromadb's dependencies leave every pin of Kinto's as it was
(`pip check` is clean)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from harness.demo.process import free_port, running

REPO = Path(__file__).resolve().parents[2]
# A loaded machine (2 shared cores in CI) may take long to start a server; a hung one still fails.
STARTUP_TIMEOUT = 120.0
LIVE_BIN = REPO / ".venv-live" / "bin"

# What `kinto init --backend memory --cache-backend memory` writes (Kinto 26), with a fixed secret,
# quiet logs and the port given: the accounts plugin (Basic auth against accounts made through the
# API, which the spec never declares) and the default personal bucket.
KINTO_INI = """\
[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = {port}

[app:main]
use = egg:kinto
kinto.includes = kinto.plugins.default_bucket
                 kinto.plugins.accounts
kinto.storage_backend = kinto.core.storage.memory
kinto.cache_backend = kinto.core.cache.memory
kinto.permission_backend = kinto.core.permission.memory
kinto.userid_hmac_secret = typed-mcp-tests
kinto.default_bucket_hmac_secret = typed-mcp-tests
multiauth.policies = account
multiauth.policy.account.use = kinto.plugins.accounts.AccountsPolicy
kinto.account_create_principals = system.Everyone
kinto.account_write_principals = account:admin
kinto.bucket_create_principals = account:admin

[loggers]
keys = root
[handlers]
keys = console
[formatters]
keys = plain
[logger_root]
level = WARNING
handlers = console
[handler_console]
class = StreamHandler
args = (sys.stderr,)
formatter = plain
[formatter_plain]
format = %(message)s
"""


def live_command(name: str) -> str:
    path = LIVE_BIN / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing: `make test` (or `make live-venv`) installs the live servers")
    return str(path)


@contextmanager
def kinto(folder: Path) -> Iterator[str]:
    """A Kinto server with the memory backend; yields its API root (`http://127.0.0.1:PORT/v1`)."""
    port = free_port()
    ini = folder / "kinto.ini"
    ini.write_text(KINTO_INI.format(port=port))
    base = f"http://127.0.0.1:{port}/v1"
    with running([live_command("kinto"), "start", "--ini", str(ini)], f"{base}/__heartbeat__", timeout=STARTUP_TIMEOUT):
        yield base


@contextmanager
def chroma(folder: Path) -> Iterator[str]:
    """A Chroma server (`chroma run`, its Rust frontend, as the docs start it) persisting under
    `folder`, with no auth configured; yields its root (`http://127.0.0.1:PORT`), under which its
    v2 API lives (`/api/v2/...`) and its OpenAPI 3.1 spec (`/openapi.json`)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [live_command("chroma"), "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)]
    with running(args, f"{base}/api/v2/heartbeat", timeout=STARTUP_TIMEOUT):
        yield base


def stdio_server(package: Path, **env: str) -> StdioServerParameters:
    """A generated package (`.../kinto-mcp`) over stdio: this environment without the package's own
    variables (`KINTO_MCP_*`), plus `env`."""
    prefix = package.name.upper().replace("-", "_") + "_"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(prefix)}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", package.name.replace("-", "_")],
        env={**clean, "PYTHONPATH": str(package / "src"), **env},
    )


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    """A call that must succeed: its structuredContent."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content[0].text)
    return result.structured_content
