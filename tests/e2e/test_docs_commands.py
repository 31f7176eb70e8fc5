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
- the copy's `.venv` is the test's own environment (its `bin` linked, and the stamp of a finished
  install: `make venv` is not done again), and its `bin` comes first on PATH (`python`, `typed-mcp`); `TYPED_MCP_VENV` names it for the Makefile that
  `typed-mcp init` writes; `SPEC_TOKEN` is set;
- a block's standard input is one MCP session (initialize, tools/list, a get_weather call), so a
  block that starts the server over stdio is answered and exits at its end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.snippets import (
    PLACEHOLDER_API,
    RUN,
    VENV,
    Block,
    commands,
    environment,
    run_script,
    served_the_demo,
)
from harness.snippets import blocks as page_blocks
from support import REPO, WEATHER_TOOLS, tree_digest

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Marked blocks and lines, as counted over all pages: a new mark changes this number.
NOT_RUN = 14


def blocks(page: Path) -> list[Block]:
    return page_blocks(page, REPO)


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


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
    # `.venv` stands for the test's environment: its programs, and the stamp of a finished install.
    (target / ".venv").mkdir()
    (target / ".venv" / "bin").symlink_to(VENV / "bin")
    (target / ".venv" / ".installed").touch()
    # The environment is installed: make must never install the copy into it.
    for name in ("pyproject.toml", "constraints.txt"):
        os.utime(target / name, (0, 0))
    return target


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


def check_promises(block: Block, folder: Path, stdout: str, before: dict[str, str]) -> None:
    """What the page promises of the block, beyond exit 0: the files it writes, what it serves."""
    script = commands(block)
    if block.language == "python" and "StdioServerParameters" in script:
        # The snippet prints the tool names, then get_weather's structuredContent.
        names, content = stdout.splitlines()[-2:]
        assert names == repr(list(WEATHER_TOOLS)) and "'conditions'" in content, stdout
    if "python -m example_mcp" in script or "python -m weather_mcp" in script:
        served_the_demo(stdout, WEATHER_TOOLS)
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
