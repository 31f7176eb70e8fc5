"""REST and MCP cannot drift: the drift check, the semantic diff on crafted and real spec pairs,
and the release path (build, twine, a real package index, a fresh virtual environment)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from harness.index import package_index
from support import CORPUS, DEMO_CONFIG, REPO, WEATHER_TOOLS, generate, run_cli

WEATHER = REPO / "specs" / "weather-api.json"
COMMITTED = REPO / "generated" / "weather-mcp"


def changed_weather(tmp_path: Path, version: str = "1.3.0") -> Path:
    """The weather spec with `conditions` removed from WeatherData and `wind` added."""
    spec = json.loads(WEATHER.read_text())
    weather = spec["components"]["schemas"]["WeatherData"]
    del weather["properties"]["conditions"]
    weather["required"].remove("conditions")
    weather["properties"]["wind"] = {"type": "number"}
    spec["info"]["version"] = version
    path = tmp_path / "weather-v2.json"
    path.write_text(json.dumps(spec))
    return path


def test_check_passes_on_the_committed_package():
    proc = run_cli(
        "check", str(WEATHER), "--out", str(COMMITTED), "--package-name", "weather-mcp", "--config", str(DEMO_CONFIG)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no drift" in proc.stderr


def test_check_against_the_live_api_and_the_snapshot(demo_url):
    proc = run_cli(
        "check",
        f"{demo_url}/v1/openapi.json",
        "--out",
        str(COMMITTED),
        "--package-name",
        "weather-mcp",
        "--snapshot",
        str(WEATHER),
        "--config",
        str(DEMO_CONFIG),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_reports_drift_with_a_summary(tmp_path: Path):
    spec = changed_weather(tmp_path)
    snapshot = tmp_path / "snapshot.json"
    shutil.copy(WEATHER, snapshot)
    proc = run_cli(
        "check", str(spec), "--out", str(COMMITTED), "--package-name", "weather-mcp", "--snapshot", str(snapshot),
        "--config", str(DEMO_CONFIG),
    )  # fmt: skip
    assert proc.returncode == 1
    assert "drift: the spec differs from the snapshot" in proc.stdout
    # The first files that differ, by name (the new version reaches deploy/kubernetes.yaml's image tag
    # and labels and server.json too); the model's change is below.
    assert "9 generated file(s) differ: README.md, deploy/kubernetes.yaml, pyproject.toml, server.json" in proc.stdout
    assert "get_weather conditions: Output field 'conditions' was removed. [output_field_removed]" in proc.stdout
    assert "get_forecast result[].wind: Output field 'result[].wind' was added. [output_field_added]" in proc.stdout
    assert snapshot.read_bytes() == WEATHER.read_bytes()  # check never writes


def test_versions_are_recorded_and_exposed(tmp_path: Path):
    about = (COMMITTED / "src" / "weather_mcp" / "_about.py").read_text()
    digest = __import__("hashlib").sha256(WEATHER.read_bytes()).hexdigest()
    assert (
        f'SPEC_SHA256 = "{digest}"' in about and 'API_VERSION = "1.2.0"' in about and 'GENERATOR = "typed-mcp ' in about
    )
    out = tmp_path / "v"
    generate(WEATHER, out, "weather-mcp", "--package-version", "2.0.0rc1")
    assert json.loads((out / "typed-mcp.json").read_text())["version"] == "2.0.0rc1"


@pytest.mark.parametrize(("version", "warned"), [("1.3.0", True), pytest.param("2.0.0", False, marks=pytest.mark.long)])
def test_diff_classifies_and_flags_a_missing_major_bump(tmp_path: Path, version: str, warned: bool):
    spec = changed_weather(tmp_path, version)
    proc = run_cli("diff", str(WEATHER), str(spec), "--format", "json", "--fail-on", "breaking")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    # The weather schema's change reaches the six tools that answer it (get_weather, the lists
    # get_forecast and get_history, and the export job's readings of start_, get_ and cancel_export).
    assert report["summary"]["breaking"] == 6 and report["summary"]["compatible"] == 6
    kinds = {(c["tool"], c["path"], c["kind"], c["breaking"]) for c in report["changes"]}
    assert ("get_weather", "conditions", "output_field_removed", True) in kinds
    assert ("get_weather", "wind", "output_field_added", False) in kinds
    assert ("get_history", "result[].conditions", "output_field_removed", True) in kinds
    assert ("breaking changes without a major version change" in proc.stderr) is warned
    if warned:  # the same change, from the committed package and as Markdown, once
        markdown = run_cli("diff", str(COMMITTED), str(spec), "--format", "markdown")
        assert markdown.returncode == 0  # --fail-on defaults to never
        assert markdown.stdout.startswith("## MCP tool catalog changes") and "### Breaking (6)" in markdown.stdout


@pytest.mark.long  # two 13 MB specs compared: about 100 s on 2 cores
def test_diff_of_two_real_github_releases(tmp_path: Path):
    """@octokit/openapi 22.0.0 (npm) against 23.0.2 (the corpus): a real release pair."""
    new = CORPUS / "github__api.github.com.json"
    if not new.is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    subprocess.run(
        ["npm", "pack", "@octokit/openapi@22.0.0", "--silent"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=600,
    )
    with tarfile.open(tmp_path / "octokit-openapi-22.0.0.tgz") as archive:
        member = archive.getmember("package/generated/api.github.com.json")
        (tmp_path / "old.json").write_bytes(archive.extractfile(member).read())
    proc = run_cli("diff", str(tmp_path / "old.json"), str(new), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    summary = report["summary"]
    assert summary["tools_added"] > 50 and summary["tools_removed"] > 0 and summary["breaking"] > 0
    kinds = {c["kind"] for c in report["changes"]}
    assert {"tool_added", "tool_removed", "output_field_added", "input_optional_added"} <= kinds
    # Added optional output fields are compatible, thanks to open schemas.
    assert all(not c["breaking"] for c in report["changes"] if c["kind"] == "output_field_added")


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin"


@pytest.mark.long  # a minute on 2 cores (a venv, a build, an index, an install): run before a release
def test_build_publish_to_a_real_index_and_install_fresh(tmp_path: Path):
    # A package index on 127.0.0.1 that only accepts uploads with the token.
    from passlib.apache import HtpasswdFile

    token = "pypi-test-token-7d3f"
    htpasswd = HtpasswdFile(str(tmp_path / "htpasswd"), new=True)
    htpasswd.set_password("__token__", token)
    htpasswd.save()
    packages = tmp_path / "packages"
    packages.mkdir()
    with package_index(packages, tmp_path / "htpasswd") as index:
        # make publish builds first (make build: the sdist, the wheel, twine check --strict), then uploads.
        publish = subprocess.run(
            ["make", "publish", f"OUT={COMMITTED}", "PACKAGE=weather-mcp"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "TWINE_REPOSITORY_URL": index, "TWINE_PASSWORD": token},
        )
        assert publish.returncode == 0, publish.stdout + publish.stderr
        assert "PASSED" in publish.stdout  # twine check --strict, on both files
        assert token not in publish.stdout + publish.stderr
        # The package has a server.json (specs/weather-mcp.toml's [registry]): the manual registry step, after the upload.
        assert f"cd {COMMITTED} && mcp-publisher login github && mcp-publisher publish" in publish.stdout
        assert sorted(p.name for p in packages.iterdir()) == [
            "weather_mcp-1.2.0-py3-none-any.whl",
            "weather_mcp-1.2.0.tar.gz",
        ]
        bin_dir = _venv(tmp_path / "fresh")
        install = subprocess.run(
            [
                str(bin_dir / "pip"),
                "install",
                "--quiet",
                "--index-url",
                f"{index}/simple/",
                "--extra-index-url",
                "https://pypi.org/simple/",
                "weather-mcp==1.2.0",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert install.returncode == 0, install.stderr[-2000:]
    assert (bin_dir / "weather-mcp").is_file()
    version = subprocess.run([str(bin_dir / "weather-mcp"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("weather-mcp 1.2.0 (API 1.2.0; spec sha256 ")

    async def list_tools() -> list[str]:
        params = StdioServerParameters(
            command=str(bin_dir / "weather-mcp"), args=["--base-url", "http://127.0.0.1:9"], env={}
        )
        async with Client(params) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    import anyio

    assert anyio.run(list_tools) == sorted(WEATHER_TOOLS)
