"""Real servers on the first try: LNbits, ZenML and dstack, each installed from PyPI into its own
venv (outside the repository), started on 127.0.0.1, generated from its live `/openapi.json`, and
driven through a realistic workflow of calls with the MCP Python SDK client (issue 31).

    make real-servers                      # REAL_SERVERS_DIR=/path/to/scratch (default /tmp/typed-mcp-real-servers)
    .venv/bin/python bench/real_servers.py --dir DIR [--servers lnbits,zenml,dstack] [--install]
        [--typed-mcp "python -m typed_mcp"] [--label after]

`--install` makes DIR/v-<server> with the pinned release (pip, PyPI) when it is missing. Each call is
found by its REST operation (the `typed-mcp/operation` of tools/list), so tool names may change.
Printed per server: calls tried, succeeded, failed (with the first words of why), and one JSON line
per server to keep. Not part of `make test`: it installs and runs third-party servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from mcp import StdioServerParameters
from mcp.client import Client

DSTACK_TOKEN = "bench-admin-token"
ANSWER = ", as text:\n"  # after it, the answer of a call that succeeded upstream (and could not be its result)
Args = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class Step:
    operation: str  # "METHOD /path"
    arguments: Args = field(default_factory=dict)
    keep: Callable[[Any, dict[str, Any]], None] | None = None  # saves what later steps need


@dataclass
class Server:
    name: str
    requirement: str
    port: int
    command: Callable[[Path, int], tuple[list[str], dict[str, str], Path | None]]  # args, env, cwd
    steps: list[Step]
    headers: Callable[[dict[str, Any]], str] = lambda ctx: ""  # <PREFIX>_HEADERS for the calls
    setup: list[Step] = field(default_factory=list)  # calls made before the headers are known
    config: str = ""  # a typed-mcp.toml, if the run needs one


def _lnbits(root: Path, port: int):
    venv, data = root / "v-lnbits", root / "lnbits-data"
    data.mkdir(exist_ok=True)
    env = {"LNBITS_DATA_FOLDER": str(data), "LNBITS_BACKEND_WALLET_CLASS": "FakeWallet", "LNBITS_ADMIN_UI": "false"}
    site = next((venv / "lib").glob("python3*/site-packages"))  # LNbits serves lnbits/static from its cwd
    return [str(venv / "bin" / "lnbits"), "--host", "127.0.0.1", "--port", str(port)], env, site


def _zenml(root: Path, port: int):
    home = root / "zenml-home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "ZENML_CONFIG_PATH": str(home / "cfg"),
        "ZENML_STORE_URL": f"sqlite:///{home}/zenml.db",
        "ZENML_SERVER_AUTH_SCHEME": "NO_AUTH",
        "ZENML_ANALYTICS_OPT_IN": "false",
        "ZENML_SERVER_DEPLOYMENT_TYPE": "local",
    }
    python = root / "v-zenml" / "bin" / "python"
    args = [str(python), "-m", "uvicorn", "zenml.zen_server.zen_server_api:app", "--host", "127.0.0.1"]
    return [*args, "--port", str(port)], env, None


def _dstack(root: Path, port: int):
    home = root / "dstack-home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "DSTACK_SERVER_ADMIN_TOKEN": DSTACK_TOKEN}
    return [str(root / "v-dstack" / "bin" / "dstack"), "server", "--host", "127.0.0.1", "--port", str(port)], env, None


def _save(key: str, *path: str | int) -> Callable[[Any, dict[str, Any]], None]:
    def keep(data: Any, ctx: dict[str, Any]) -> None:
        for part in path:
            data = data[part]
        ctx[key] = data

    return keep


SERVERS = {
    "lnbits": Server(
        "lnbits",
        "lnbits==1.6.2",
        3301,
        _lnbits,
        setup=[Step("POST /api/v1/account", {"body": {"name": "bench"}}, _save("key", "adminkey"))],
        headers=lambda ctx: f"X-Api-Key: {ctx['key']}",
        steps=[
            Step("GET /api/v1/wallet"),
            Step(
                "POST /api/v1/payments",
                {"body": {"out": False, "amount": 100, "memo": "bench invoice"}},
                lambda d, c: c.update(hash=d["payment_hash"], bolt11=d["bolt11"]),
            ),
            Step("GET /api/v1/payments/{payment_hash}", lambda c: {"payment_hash": c["hash"]}),
            Step("GET /api/v1/payments", {"limit": 10}),
            Step("GET /api/v1/payments/paginated", {"limit": 10}),
            Step("POST /api/v1/payments/decode", lambda c: {"body": {"data": c["bolt11"]}}),
            Step("GET /api/v1/payments/fee-reserve", lambda c: {"invoice": c["bolt11"]}),
            Step("PUT /api/v1/wallet/{new_name}", {"new_name": "renamed"}),
            Step("GET /api/v1/payments/history"),
            Step("GET /api/v1/currencies"),
            Step("GET /api/v1/health"),
        ],
    ),
    "zenml": Server(
        "zenml",
        "zenml[server]==0.98.0",
        3302,
        _zenml,
        steps=[
            # A fresh server is activated first (what `zenml login --local` does), creating its default user.
            Step("PUT /api/v1/activate", {"body": {"admin_username": "default", "admin_password": ""}}),
            Step("GET /api/v1/current-user"),
            Step("GET /api/v1/projects"),
            Step("POST /api/v1/projects", {"body": {"name": "bench", "display_name": "Bench"}}, _save("project", "id")),
            Step("GET /api/v1/projects/{project_name_or_id}", {"project_name_or_id": "bench"}),
            Step(
                "PUT /api/v1/projects/{project_name_or_id}",
                lambda c: {"project_name_or_id": c["project"], "body": {"description": "x"}},  # takes the UUID
            ),
            Step("POST /api/v1/tags", {"body": {"name": "bench-tag"}}, _save("tag", "id")),
            Step("GET /api/v1/tags"),
            Step("GET /api/v1/tags/{tag_id}", lambda c: {"tag_id": c["tag"]}),
            Step("PUT /api/v1/tags/{tag_id}", lambda c: {"tag_id": c["tag"], "body": {"color": "blue"}}),
            Step("DELETE /api/v1/tags/{tag_id}", lambda c: {"tag_id": c["tag"]}),
            Step("GET /api/v1/stacks"),
            Step("GET /api/v1/components"),
            Step("GET /api/v1/users"),
            Step("GET /api/v1/pipelines"),
            Step("GET /api/v1/info"),
            Step("DELETE /api/v1/projects/{project_name_or_id}", {"project_name_or_id": "bench"}),
        ],
    ),
    "dstack": Server(
        "dstack",
        "dstack[server]==0.22.5",
        3300,
        _dstack,
        headers=lambda ctx: f"Authorization: Bearer {DSTACK_TOKEN}",
        steps=[
            Step("POST /api/users/get_my_user"),
            Step("POST /api/users/list", {"body": {}}),
            Step("POST /api/users/create", {"body": {"username": "bench", "global_role": "user"}}),
            Step("POST /api/users/get_user", {"body": {"username": "bench"}}),
            Step("POST /api/users/update", {"body": {"username": "bench", "global_role": "admin"}}),
            Step("POST /api/projects/list", {"body": {}}),
            Step("POST /api/projects/create", {"body": {"project_name": "benchproj"}}),
            Step(
                "POST /api/project/{project_name}/secrets/create_or_update",
                {"project_name": "benchproj", "body": {"name": "s1", "value": "v1"}},
            ),
            Step("POST /api/project/{project_name}/secrets/get", {"project_name": "benchproj", "body": {"name": "s1"}}),
            Step("POST /api/project/{project_name}/secrets/list", {"project_name": "benchproj"}),
            Step(
                "POST /api/project/{project_name}/secrets/delete",
                {"project_name": "benchproj", "body": {"secrets_names": ["s1"]}},
            ),
            Step("POST /api/runs/list", {"body": {}}),
            Step("POST /api/fleets/list", {"body": {}}),
            Step("POST /api/volumes/list", {"body": {}}),
            Step("POST /api/projects/delete", {"body": {"projects_names": ["benchproj"]}}),
            Step("POST /api/users/delete", {"body": {"users": ["bench"]}}),
        ],
    ),
}


def _install(root: Path, server: Server) -> None:
    venv = root / f"v-{server.name}"
    if (venv / "bin" / "python").exists():
        return
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", server.requirement], check=True)


def _wait(url: str, proc: subprocess.Popen | None, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise TimeoutError(f"{url} did not answer within {timeout:g}s")


def _result_data(result: Any) -> Any:
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    return data


async def _session(params: StdioServerParameters, steps: list[Step], ctx: dict[str, Any], rows: list[dict]) -> None:
    async with Client(params) as client:
        tools = {}
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            for tool in page.tools:
                tools[(tool.meta or {}).get("typed-mcp/operation")] = tool
            cursor = page.next_cursor
            if not cursor:
                break
        for step in steps:
            row = {"operation": step.operation}
            rows.append(row)
            tool = tools.get(step.operation)
            if tool is None:
                row.update(ok=False, why="no such tool")
                continue
            try:
                arguments = step.arguments(ctx) if callable(step.arguments) else dict(step.arguments)
            except KeyError as exc:
                row.update(ok=False, why=f"not tried: needs {exc} from an earlier call")
                continue
            accepted = (tool.input_schema or {}).get("properties", {})
            arguments = {k: v for k, v in arguments.items() if k in accepted}
            result = await client.call_tool(tool.name, arguments)
            text = " ".join(block.text for block in result.content if getattr(block, "type", "") == "text")
            why = " ".join(text.split())[:400] if result.is_error else ""
            row.update(tool=tool.name, ok=not result.is_error, why=why)
            data = _result_data(result)
            if result.is_error and ANSWER in text:
                # Done upstream, its answer given as text: what an agent reads, later calls use.
                data = json.loads(text.split(ANSWER, 1)[1])
            if (data is not None or not result.is_error) and step.keep is not None:
                try:
                    step.keep(data, ctx)
                except (KeyError, IndexError, TypeError):
                    row["why"] = "succeeded, but its answer lacks what later calls need"


def run_server(root: Path, server: Server, typed_mcp: list[str], label: str, start: bool) -> dict[str, Any]:
    base = f"http://127.0.0.1:{server.port}"
    args, env, cwd = server.command(root, server.port)
    proc = None
    if start:
        log = (root / f"{server.name}.log").open("ab")
        proc = subprocess.Popen(args, env={**os.environ, **env}, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait(f"{base}/openapi.json", proc, 600)
        package = root / "packages" / label / f"{server.name}-mcp"
        command = [*typed_mcp, "generate", f"{base}/openapi.json", "--out", str(package)]
        command += ["--package-name", f"{server.name}-mcp", "--no-snapshot"]
        if server.config:
            config = root / f"{server.name}.toml"
            config.write_text(server.config)
            command += ["--config", str(config)]
        began = time.monotonic()
        generated = subprocess.run(command, capture_output=True, text=True)
        seconds = time.monotonic() - began
        if generated.returncode != 0:
            return {"server": server.name, "label": label, "generate": generated.stderr.strip()[-400:]}
        module = f"{server.name}_mcp"
        prefix = module.upper()
        clean = {k: v for k, v in os.environ.items() if not k.startswith(prefix)}
        environment = {**clean, "PYTHONPATH": str(package / "src"), f"{prefix}_BASE_URL": base}
        ctx: dict[str, Any] = {}
        rows: list[dict] = []
        if server.setup:
            setup = StdioServerParameters(command=sys.executable, args=["-m", module], env=environment)
            asyncio.run(_session(setup, server.setup, ctx, rows))
        headers = server.headers(ctx) if server.setup == [] or ctx else ""
        calls = StdioServerParameters(
            command=sys.executable, args=["-m", module], env={**environment, f"{prefix}_HEADERS": headers}
        )
        asyncio.run(_session(calls, server.steps, ctx, rows))
        ok = sum(1 for row in rows if row["ok"])
        return {
            "server": server.name,
            "label": label,
            "generate_seconds": round(seconds, 1),
            "tried": len(rows),
            "succeeded": ok,
            "failed": len(rows) - ok,
            "calls": rows,
        }
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir", type=Path, default=Path(os.environ.get("REAL_SERVERS_DIR", "/tmp/typed-mcp-real-servers"))
    )
    parser.add_argument("--servers", default="lnbits,zenml,dstack")
    parser.add_argument("--install", action="store_true", help="pip-install a missing server venv from PyPI")
    parser.add_argument("--running", action="store_true", help="the servers are already running on their ports")
    parser.add_argument("--typed-mcp", default=f"{shlex.quote(sys.executable)} -m typed_mcp")
    parser.add_argument("--label", default="current", help="a name for this run's packages and figures")
    parser.add_argument("--config", default="", help="a typed-mcp.toml line for every server (naive_datetimes = ...)")
    options = parser.parse_args()
    root = options.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    for name in options.servers.split(","):
        server = SERVERS[name]
        if options.config:
            server.config = options.config + "\n"
        if options.install:
            _install(root, server)
        report = run_server(root, server, shlex.split(options.typed_mcp), options.label, not options.running)
        print(f"{name} ({options.label}): ", end="")
        if "calls" not in report:
            print(f"generation failed: {report.get('generate')}")
        else:
            print(f"{report['tried']} calls, {report['succeeded']} succeeded, {report['failed']} failed")
            for row in report["calls"]:
                if not row["ok"] or row.get("why"):
                    print(f"  {row['operation']}: {row.get('why')}")
        print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
