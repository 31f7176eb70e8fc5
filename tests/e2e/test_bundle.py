"""`typed-mcp bundle`: the committed demo package as an MCPB bundle, checked by the official
`@anthropic-ai/mcpb` tooling (validate, unpack, pack, and the library's own resolution of the command a
host runs), then started from the unpacked bundle over stdio with a Python that has none of the
package's dependencies, and called through the MCP Python SDK client against the demo API."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from harness.mcpb import host_config, mcpb
from support import REPO, WEATHER_REPORT, WEATHER_TOOLS, run_cli

pytestmark = [pytest.mark.anyio, pytest.mark.needs("node")]

PACKAGE = REPO / "generated" / "weather-mcp"
CONSTRAINTS = REPO / "constraints.txt"


def build(out: Path) -> Path:
    proc = run_cli("bundle", str(PACKAGE), "--out", str(out), "--constraint", str(CONSTRAINTS))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("bundle") / "weather-mcp.mcpb")


@pytest.fixture(scope="module")
def unpacked(bundle: Path, tmp_path_factory) -> Path:
    """The bundle unpacked by the official CLI, as a host installs it."""
    folder = tmp_path_factory.mktemp("unpacked") / "weather-mcp"
    proc = mcpb("unpack", bundle, folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


@pytest.fixture(scope="module")
def host_python(tmp_path_factory) -> Path:
    """A folder whose `python3` is this Python's base interpreter (no venv, so none of the package's
    dependencies): put first on PATH, it is what the manifest's `python3` finds."""
    folder = tmp_path_factory.mktemp("host-bin")
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (folder / "python3").symlink_to(base)
    bare = subprocess.run([folder / "python3", "-c", "import mcp"], capture_output=True, text=True)
    assert bare.returncode != 0, "the base interpreter has mcp installed: the bundle's lib/ would not be tested"
    return folder


def test_the_official_cli_validates_reads_and_repacks_the_bundle(bundle: Path, unpacked: Path, tmp_path: Path):
    validated = mcpb("validate", unpacked / "manifest.json")
    assert validated.returncode == 0 and "passes" in validated.stdout, validated.stdout + validated.stderr
    info = mcpb("info", bundle)
    assert info.returncode == 0 and "weather-mcp" in info.stdout, info.stdout + info.stderr
    # The official packer accepts the same tree (lib/ aside: 1,000 files of other projects' code that
    # would only make it slower) and packs the same files.
    tree = tmp_path / "tree"
    shutil.copytree(unpacked, tree, ignore=lambda folder, names: ["lib"] if Path(folder).name == "server" else [])
    repacked = mcpb("pack", tree, tmp_path / "repacked.mcpb")
    assert repacked.returncode == 0, repacked.stdout + repacked.stderr
    with zipfile.ZipFile(bundle) as ours, zipfile.ZipFile(tmp_path / "repacked.mcpb") as theirs:
        assert sorted(theirs.namelist()) == [name for name in ours.namelist() if not name.startswith("server/lib/")]


def test_the_manifest_maps_the_packages_environment_to_user_config(unpacked: Path):
    manifest = json.loads((unpacked / "manifest.json").read_text())
    server = manifest["server"]
    assert server["type"] == "python" and server["entry_point"] == "server/main.py"
    assert server["mcp_config"] == {
        "command": "python3",
        "args": ["${__dirname}/server/main.py"],
        "env": {
            "PYTHONPATH": "${__dirname}/server/lib",
            "WEATHER_MCP_BASE_URL": "${user_config.base_url}",
            "WEATHER_MCP_HTTP_BEARER_TOKEN": "${user_config.http_bearer_token}",
        },
    }
    config = manifest["user_config"]
    assert config["base_url"]["default"] == "http://127.0.0.1:8000" and "sensitive" not in config["base_url"]
    assert config["http_bearer_token"]["sensitive"] is True
    assert [tool["name"] for tool in manifest["tools"]] == list(WEATHER_TOOLS)
    assert manifest["compatibility"]["platforms"] == [sys.platform]
    # What lib/ holds is what the lock file pins.
    pins = {line.lower() for line in CONSTRAINTS.read_text().splitlines() if "==" in line}
    vendored = (unpacked / "server" / "requirements.txt").read_text().split()
    assert "mcp==2.3.0" in vendored and {line.lower() for line in vendored} <= pins
    assert not (unpacked / "server" / "lib" / "bin").exists()


def test_an_unset_credential_is_empty_not_the_placeholder(unpacked: Path):
    """A host substitutes nothing for a field without a value or a default: the literal
    `${user_config.http_bearer_token}` would go upstream as the token."""
    resolved = host_config(unpacked, {})
    assert resolved is not None
    assert resolved["env"]["WEATHER_MCP_HTTP_BEARER_TOKEN"] == ""
    assert resolved["env"]["WEATHER_MCP_BASE_URL"] == "http://127.0.0.1:8000"


async def test_the_server_runs_from_the_unpacked_bundle_as_a_host_starts_it(unpacked: Path, host_python, demo_url):
    resolved = host_config(unpacked, {"base_url": demo_url, "http_bearer_token": "demo-token"})
    assert resolved is not None and resolved["command"] == "python3"
    assert resolved["args"] == [f"{unpacked}/server/main.py"]
    env = {**resolved["env"], "PATH": f"{host_python}{os.pathsep}{os.environ['PATH']}"}
    server = StdioServerParameters(command=resolved["command"], args=resolved["args"], env=env)
    async with Client(server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        temperature = await client.call_tool("get_temperature", {"city": "London"})
        report = await client.call_tool("create_report", {"body": WEATHER_REPORT})
    assert names == list(WEATHER_TOOLS)
    assert not temperature.is_error and temperature.structured_content == {"result": 22}
    assert not report.is_error, report.content  # the sensitive user_config value reached the API
    assert httpx.get(f"{demo_url}/_debug/requests").json()[-1]["authorization"] == "Bearer demo-token"


def test_the_same_package_gives_the_same_bytes(bundle: Path, tmp_path: Path):
    again = build(tmp_path / "again.mcpb")
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(bundle.read_bytes()).hexdigest()
    with zipfile.ZipFile(bundle) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names) and {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_a_folder_that_is_not_a_generated_package_is_one_line(tmp_path: Path):
    proc = run_cli("bundle", str(tmp_path), "--out", str(tmp_path / "x.mcpb"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: {tmp_path / 'typed-mcp.json'}: not a package typed-mcp generated"
    assert not (tmp_path / "x.mcpb").exists()
