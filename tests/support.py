"""Test helpers: a scriptable HTTP server on 127.0.0.1, the CLI as a subprocess, generated packages."""

from __future__ import annotations

import atexit
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from harness import environment
from harness.demo.process import HttpServer, Reply, Seen, running  # noqa: F401 - re-exported for the tests
from typed_mcp.write import tree_files

REPO = Path(__file__).resolve().parent.parent


def _corpus() -> Path:
    """The shared corpus: TYPED_MCP_CORPUS, else `shared/corpus` beside this repository, else beside
    the repository this one was cloned from (CI tests a fresh clone in a temporary folder)."""
    if os.environ.get("TYPED_MCP_CORPUS"):
        return Path(os.environ["TYPED_MCP_CORPUS"])
    candidates = [REPO.parent / "shared" / "corpus"]
    origin = subprocess.run(["git", "-C", str(REPO), "remote", "get-url", "origin"], capture_output=True, text=True)
    if origin.returncode == 0 and Path(origin.stdout.strip()).is_dir():
        candidates.append(Path(origin.stdout.strip()).resolve().parent / "shared" / "corpus")
    return next((c for c in candidates if c.is_dir()), candidates[0])


CORPUS = _corpus()
# The demo Weather API's tools, in the order of its spec.
WEATHER_TOOLS = (
    "get_temperature",
    "get_weather",
    "get_forecast",
    "get_temperatures",
    "get_history",
    "create_report",
    "get_report",
    "delete_report",
    "start_export",
    "get_export",
    "cancel_export",
    "upload_attachment",
    "put_station_photo",
)
# The committed demo package, and the table view (MCP Apps) of its one list tool.
DEMO = REPO / "generated" / "weather-mcp"
# The config `make generate` gives the demo package (its [registry] entry): every regeneration of the
# committed package passes it.
DEMO_CONFIG = REPO / "specs" / "weather-mcp.toml"
FORECAST_VIEW = "ui://weather-mcp/tables/get_forecast.html"
HISTORY_VIEW = "ui://weather-mcp/tables/get_history.html"  # the demo's other list tool
APPS_CLIENT = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]  # a host that renders views says so
# The station report the strict-client, serving-mode and end-to-end tests create (their assertions
# read its values).
LONDON_REPORT = {
    "city": "London",
    "temperature": 21.5,
    "humidity": 40,
    "conditions": "clear",
    "observed_at": "2026-11-30T09:00:00Z",
}
# A report the demo API's create_report accepts (with its bearer token).
WEATHER_REPORT = {
    "city": "Paris",
    "temperature": 18,
    "humidity": 50,
    "conditions": "fog",
    "observed_at": "2026-11-30T08:00:00+01:00",
}

# A raw MCP initialize request over streamable HTTP, where status codes and headers are the point.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def package_stdio(package: Path, module: str, *flags: str) -> StdioServerParameters:
    """A generated package's server over stdio, without the demo package's WEATHER_MCP_ settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", module, *flags], env={**clean, "PYTHONPATH": str(package / "src")}
    )


LINK_KEY = "k" * 40  # a link key demo servers share (any secret of 32 bytes or more)


def demo_stdio(base_url: str, *flags: str, **env: str) -> StdioServerParameters:
    """The committed demo package's server over stdio, on the demo API at `base_url`."""
    params = package_stdio(DEMO, "weather_mcp", "--base-url", base_url, *flags)
    return params.model_copy(update={"env": {**(params.env or {}), **env}})


def demo_http_command(port: int, base_url: str, *flags: str, **env: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of the committed demo package's server over streamable HTTP
    on `port`."""
    args = [sys.executable, "-m", "weather_mcp", "--base-url", base_url, "--transport", "streamable-http"]
    environ = {**environment(DEMO / "src"), "WEATHER_MCP_HTTP_BEARER_TOKEN": "demo-token", **env}
    return [*args, "--port", str(port), *flags], environ


def demo_http(port: int, base_url: str, *flags: str, **env: str):
    """The committed demo package's server over streamable HTTP on `port` (a context manager)."""
    args, environ = demo_http_command(port, base_url, *flags, **env)
    return running(args, f"http://127.0.0.1:{port}/health", environ)


# A valid body for the demo's create_report.
WEATHER_REPORT = {
    "city": "Oslo",
    "temperature": 1.0,
    "humidity": 2.0,
    "conditions": "snow",
    "observed_at": "2026-12-01T00:00:00Z",
}


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "typed_mcp", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def build_wheel(project: Path, out: Path) -> Path:
    """The wheel of a project folder, built with this environment's hatchling (no isolated
    environment to download); must succeed."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(project)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("*.whl")
    return path


def generate(
    spec: dict[str, Any] | Path | str, out: Path, package: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """Generate from a spec dict (written to a file next to `out`), a path or a URL; must succeed."""
    if isinstance(spec, dict):
        path = out.parent / f"{package}.openapi.json"
        path.write_text(json.dumps(spec))
        spec = path
    proc = run_cli("generate", str(spec), "--out", str(out), "--package-name", package, "--no-snapshot", *extra)
    assert proc.returncode == 0, proc.stderr
    return proc


_GENERATED: dict[tuple[str, str, tuple[str, ...]], Path] = {}


def generated_copy(spec: dict[str, Any] | Path | str, out: Path, package: str, *extra: str) -> Path:
    """`out` holds a copy of the package `generate` writes for these arguments, generated once per
    test process: for tests that start from a package and test something else (a failure leaves it
    alone, a crafted manifest)."""
    key = (json.dumps(spec, sort_keys=True) if isinstance(spec, dict) else str(spec), package, extra)
    if key not in _GENERATED:
        root = tempfile.mkdtemp(prefix="typed-mcp-test-")
        atexit.register(shutil.rmtree, root, True)
        built = Path(root) / package
        generate(spec, built, package, *extra)
        _GENERATED[key] = built
    shutil.copytree(_GENERATED[key], out, symlinks=True)
    return out


def generate_plain_and_curated(spec: str, root: Path, package: str, config: str) -> dict[str, Path]:
    """The package generated from `spec` alone ("plain") and with a typed-mcp.toml of `config`
    ("curated"), under `root`."""
    plain, curated = root / "plain" / package, root / "curated" / package
    generate(spec, plain, package)
    (root / "typed-mcp.toml").write_text(config)
    generate(spec, curated, package, "--config", str(root / "typed-mcp.toml"))
    return {"plain": plain, "curated": curated}


def import_server(out: Path, module: str):
    """Import a generated package in this process and build its MCPServer."""
    src = str(out / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module(f"{module}.server").build_server()


def tree_digest(root: Path) -> dict[str, str]:
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in sorted(tree_files(root).items())}


def strip_annotations(schema: Any) -> Any:
    """A schema without the keys that only label it (titles, descriptions) and without
    `additionalProperties: true` (the one deliberate difference: models are open)."""
    if isinstance(schema, list):
        return [strip_annotations(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "description") or (key == "additionalProperties" and value is True):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: strip_annotations(sub) for name, sub in value.items()}
        else:
            out[key] = strip_annotations(value)
    return out
