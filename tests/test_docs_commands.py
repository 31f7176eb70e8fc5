"""Every shell command and Python snippet of the README and the docs/ pages runs, as a reader would
run it: in a copy of this working tree (a fresh clone's files), or in an empty folder where the page
says "in your own repository", against the demo API on 127.0.0.1. Each block's exit code is checked,
and the files and answers it promises where the page promises them.

A block that cannot run here (the 25-minute suite, a client application, a server that runs until it
is stopped) is marked in the markdown, on the lines right above its fence:

    <!-- not-run: why -->                the whole block
    <!-- not-run `make test`: why -->    only its lines that start with `make test`
    <!-- run: in an empty folder -->     the block runs in an empty folder, not in the copy

and NOT_RUN below counts the marks, so a new block either runs or says why it does not (and the
count changes with it, in review). The substitutions, what a reader has and a test does not:

- `https://api.example.com` is the demo API (`.../v1/openapi.json` its live spec);
- the copy's `.venv` is the test's own environment (a link: `make venv` is not done again), and its
  `bin` comes first on PATH (`python`, `typed-mcp`); `TYPED_MCP_VENV` names it for the Makefile that
  `typed-mcp init` writes; `SPEC_TOKEN` is set;
- a block's standard input is one MCP session (initialize, tools/list, a get_weather call), so a
  block that starts the server over stdio is answered and exits at its end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support import DEMO, REPO, WEATHER_TOOLS, tree_digest

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELL = {"sh", "console"}
RUN = SHELL | {"python"}
# Marked blocks and lines, as counted over all pages: a new mark changes this number.
NOT_RUN = 7
PLACEHOLDER_API = "https://api.example.com"
VENV = Path(sys.executable).parent.parent
# What an outer make (`make test`) passes down, and what the tests' conftest sets for every other test.
OUTER = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "TYPED_MCP_NO_CACHE"}
SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "docs", "version": "0"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"city": "Paris"}},
    },
]


@dataclass
class Block:
    page: str
    line: int
    language: str
    body: str
    marks: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def skipped(self) -> str | None:
        """Why the whole block is not run, if it is marked so."""
        return next((m.partition(":")[2].strip() for m in self.marks if m.startswith("not-run:")), None)

    def skipped_lines(self) -> list[str]:
        """The command prefixes whose lines are not run (`not-run `PREFIX`: why`)."""
        return [m.group(1) for mark in self.marks if (m := re.match(r"not-run `([^`]+)`:\s*\S", mark))]

    @property
    def empty_folder(self) -> bool:
        return "run: in an empty folder" in self.marks


def blocks(page: Path, root: Path = REPO) -> list[Block]:
    """The page's fenced blocks, each with the marks of the HTML comments right above its fence."""
    found: list[Block] = []
    lines = page.read_text().splitlines()
    index = 0
    while index < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[index])
        if not fence:
            index += 1
            continue
        start = index
        index += 1
        while index < len(lines) and lines[index] != "```":
            index += 1
        marks = []
        above = start - 1
        while above >= 0 and (mark := re.match(r"^<!-- (.*) -->$", lines[above])):
            marks.insert(0, mark.group(1).strip())
            above -= 1
        body = "\n".join(lines[start + 1 : index]) + "\n"
        found.append(Block(str(page.relative_to(root)), start + 1, fence.group(1), body, marks))
        index += 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def commands(block: Block) -> str:
    """The script a reader would paste: console prompts' commands only, marked lines left out, the
    placeholders replaced (the API's URL is substituted when run)."""
    text = block.body
    if block.language == "console":
        text = "".join(line[2:] + "\n" for line in text.splitlines() if line.startswith("$ "))
    if block.language in SHELL:
        text = re.sub(r"\\\n\s*", " ", text)  # a command continued over lines is one line
    logical = text.splitlines()
    kept = [line for line in logical if not any(line.strip().startswith(p) for p in block.skipped_lines())]
    return "\n".join(kept) + "\n"


def test_every_fence_names_its_language_and_marks_say_why():
    unnamed = [b.where for b in all_blocks() if not b.language]
    assert not unnamed, "name each block's language (text for plain text): " + ", ".join(unnamed)
    marked = 0
    for block in all_blocks():
        for mark in block.marks:
            assert re.match(r"(not-run( `[^`]+`)?: \S|run: in an empty folder$)", mark), f"{block.where}: {mark!r}"
        if block.marks and block.language not in RUN:
            pytest.fail(f"{block.where}: a {block.language} block is never run; its mark says nothing")
        marked += bool(block.skipped()) + len(block.skipped_lines())
        if not block.skipped():
            for prefix in block.skipped_lines():
                assert any(line.strip().startswith(prefix) for line in block.body.splitlines()), (
                    f"{block.where}: no line starts with {prefix!r}"
                )
    assert marked == NOT_RUN, f"{marked} blocks or lines are marked not-run, NOT_RUN says {NOT_RUN}"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    # The pages generate the demo package several times: a cache of this module's own makes the
    # repeats take seconds (the cache has tests of its own).
    return tmp_path_factory.mktemp("docs-cache")


def tree_copy(target: Path) -> Path:
    """The working tree's files (tracked, and new ones not ignored), as a fresh clone holds them, with
    `.venv` the test's own environment."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in sorted(set(filter(None, listed.split("\0")))):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(VENV)
    # The environment is installed: make must never install the copy into it.
    for name in ("pyproject.toml", "constraints.txt"):
        os.utime(target / name, (0, 0))
    return target


def environment(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OUTER and not k.startswith("WEATHER_MCP_")}
    return {
        **env,
        "PATH": f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "TYPED_MCP_VENV": str(VENV),
        "TYPED_MCP_CACHE_DIR": str(cache),
        "SPEC_TOKEN": "docs-test-token",
    }


def run_block(block: Block, cwd: Path, demo_url: str, cache: Path) -> tuple[int, str, str]:
    """The block's exit code, stdout and stderr. A shell block reads the MCP session on its standard
    input, which stays open until the last request is answered (a stdio server ends at its input's
    end, dropping a call still in flight), then closes."""
    script = commands(block).replace(PLACEHOLDER_API, demo_url)
    if block.language == "python":
        argv = [sys.executable, "-c", script]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", script]
    return run_script(argv, cwd, environment(cache))


def run_script(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """Run `argv`; a shell (bash) reads the MCP session on its input until the last answer."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    if argv[0] != "bash":
        proc.stdin.close()
    else:
        proc.stdin.write("".join(json.dumps(message) + "\n" for message in SESSION))
        proc.stdin.flush()
    out: list[str] = []
    err: list[str] = []

    def read_out() -> None:
        for line in proc.stdout:
            out.append(line)
            if line.startswith('{"jsonrpc"') and json.loads(line).get("id") == SESSION[-1]["id"]:
                proc.stdin.close()
        if not proc.stdin.closed:
            proc.stdin.close()

    readers = [threading.Thread(target=read_out), threading.Thread(target=lambda: err.append(proc.stderr.read()))]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=600)  # only a hang reaches this
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for reader in readers:
        reader.join()
    return proc.returncode, "".join(out), "".join(err)


def answers(stdout: str) -> dict[int, dict]:
    """The JSON-RPC answers a stdio server wrote, by request id."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith('{"jsonrpc"'):
            message = json.loads(line)
            found[message.get("id")] = message
    return found


def served_the_demo(stdout: str) -> None:
    """The server listed the demo's tools and answered get_weather from the demo API."""
    replies = answers(stdout)
    assert [tool["name"] for tool in replies[2]["result"]["tools"]] == list(WEATHER_TOOLS)
    result = replies[3]["result"]
    assert not result.get("isError"), result
    assert set(result["structuredContent"]) >= {"temperature", "conditions"}


def check_promises(block: Block, folder: Path, stdout: str, before: dict[str, str]) -> None:
    """What the page promises of the block, beyond exit 0: the files it writes, what it serves."""
    script = commands(block)
    if block.language == "python" and "StdioServerParameters" in script:
        # The snippet prints the tool names, then get_weather's structuredContent.
        names, content = stdout.splitlines()[-2:]
        assert names == repr(list(WEATHER_TOOLS)) and "'conditions'" in content, stdout
    if "python -m example_mcp" in script or "python -m weather_mcp" in script:
        served_the_demo(stdout)
    for out in re.findall(r"--out (\S+)", script):
        if out.endswith(".mcpb"):
            assert (folder / out).is_file(), out
        else:
            manifest = json.loads((folder / out / "typed-mcp.json").read_text())
            if "--profile data-tools" in script:
                assert manifest["profile"] == "data-tools"
    for snapshot in re.findall(r"--snapshot (\S+)", script):
        assert json.loads((folder / snapshot).read_text())["openapi"]
    if "typed-mcp init" in script:
        for name in ("typed-mcp.toml", "Makefile", ".github/workflows/api-drift.yml", "specs/weather-mcp.json"):
            assert (folder / name).is_file(), name
    if re.search(r"^make generate\b", script, re.M):
        # In the repository the snapshot regenerates the committed package, byte for byte; in a
        # user's repository (init) it is the package.
        assert (folder / "generated/weather-mcp/src/weather_mcp/catalog.json").is_file()
        if not block.empty_folder:
            assert tree_digest(folder / "generated") == before, "make generate changed the committed package"
    if re.search(r"^make docs\b", script, re.M):
        assert (folder / "site/index.html").is_file() and (folder / "site/reference/cli/index.html").is_file()
    if re.search(r"^make bundle\b", script, re.M):
        assert (folder / "dist/weather-mcp.mcpb").is_file()


def runnable_blocks() -> list:
    """Every block that runs, once: a page that repeats another's block (the README's quickstart in
    getting-started.md) is tested by the first one's run, named after every place it stands."""
    unique: dict[tuple[str, bool], list[Block]] = {}
    for block in all_blocks():
        if block.language in RUN and not block.skipped() and commands(block).strip():
            unique.setdefault((commands(block), block.empty_folder), []).append(block)
    return [pytest.param(same[0], id=" ".join(b.where for b in same)) for same in unique.values()]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    # The blocks write apart (generated/<their package>, dist/, site/), as a reader running them
    # one after another in one clone would.
    return tree_copy(tmp_path_factory.mktemp("clone"))


@pytest.mark.parametrize("block", runnable_blocks())
def test_every_command_and_snippet_runs(block: Block, demo_url: str, cache: Path, clone: Path, tmp_path: Path):
    folder = tmp_path if block.empty_folder else clone
    before = tree_digest(folder / "generated") if (folder / "generated").is_dir() else {}
    code, stdout, stderr = run_block(block, folder, demo_url, cache)
    assert code == 0, f"{block.where} exited {code}:\n{stdout[-3000:]}\n{stderr[-3000:]}"
    check_promises(block, folder, stdout, before)


# The generated README's lines that cannot run here, by how they start, with the reason. The README
# is every package's (templates/README.md.j2), so its marks live here rather than in every package;
# a line that matches none runs.
PACKAGE_NOT_RUN = {
    "uvx weather-mcp": "needs the package on an index: tests/test_client_setup.py runs it from a local one",
    "python -m weather_mcp --transport streamable-http": "serves until stopped: tests/test_e2e_demo.py "
    "serves over HTTP, tests/test_hosted.py with --auth oauth against a local authorization server",
    "export WEATHER_MCP_OAUTH_INTROSPECTION_SECRET": "the secret of the oauth line above",
    "claude mcp add": "the Claude Code application",
    "code --add-mcp": "the VS Code application (tests/test_client_setup.py decodes its JSON)",
    "docker ": "an image build that pulls a base image: tests/test_dockerfile.py checks the Dockerfile",
    "export WEATHER_MCP_BASE_URL": "the environment of the uvicorn and gunicorn lines below",
    "uvicorn ": "serves until stopped: tests/test_asgi.py runs the app under uvicorn's workers",
    "gunicorn ": "serves until stopped, on port 8000 of every address",
    "python -m weather_mcp --toolsets": "the demo API has no toolsets, as its README says",
}
# What each server line must list: the flags' selection of the demo's tools.
SERVED = {
    "--tools": ["get_weather", "get_forecast"],
    "--read-only": ["get_temperature", "get_weather", "get_forecast", "get_temperatures", "get_report"],
    "--discovery": ["search_tools", "list_toolsets", "describe_tool", "call_tool"],
}


def test_the_generated_readme_commands_run_against_the_package(demo_url: str, cache: Path, tmp_path: Path):
    # Each line on its own (each stdio server gets its own session), in a copy of the package's
    # folder. `pip install .` installs into a folder of the test's (--target, its dependencies being
    # the test's own); the README's base URL is the demo API's, through the variable it documents.
    package = tmp_path / "weather-mcp"
    shutil.copytree(DEMO, package)
    site = tmp_path / "site"
    env = {
        **environment(cache),
        "WEATHER_MCP_BASE_URL": demo_url,
        "PYTHONPATH": str(site),
        "PATH": f"{site / 'bin'}{os.pathsep}{environment(cache)['PATH']}",
    }
    ran, skipped = [], []
    for block in blocks(DEMO / "README.md", DEMO):
        if block.language not in SHELL:
            continue
        for line in commands(block).splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if not line:
                continue
            if any(line.startswith(prefix) for prefix in PACKAGE_NOT_RUN):
                skipped.append(line)
                continue
            script = line.replace(PLACEHOLDER_API, demo_url).replace("NAME,...", ",".join(SERVED["--tools"]))
            if script == "pip install .":
                script = f"python -m pip install --quiet --no-deps --no-build-isolation --target {site} ."
            code, stdout, stderr = run_script(["bash", "-e", "-c", script], package, env)
            assert code == 0, f"{line!r} exited {code}:\n{stdout[-2000:]}\n{stderr[-2000:]}"
            if script.startswith(("weather-mcp", "python -m weather_mcp")) and "--version" not in script:
                flag = next((f for f in SERVED if f in script.split()), None)
                if flag:
                    listed = answers(stdout)[2]["result"]["tools"]
                    assert [tool["name"] for tool in listed] == SERVED[flag], line
                else:
                    served_the_demo(stdout)
            if "--version" in script:
                assert stdout.startswith("weather-mcp 1.2.0 (API 1.2.0; spec sha256 "), stdout
            ran.append(line)
    assert "weather-mcp" in ran and len(ran) >= 6, ran
    # Every reason is used: a line that stops being in the README takes its mark with it.
    assert {p for p in PACKAGE_NOT_RUN if any(line.startswith(p) for line in skipped)} == set(PACKAGE_NOT_RUN)
