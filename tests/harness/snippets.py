"""The documentation's fenced blocks as a reader runs them (tests/e2e/test_docs_commands.py for the README
and docs/, tests/e2e/test_package_readme.py for a generated package's README): reading the blocks and the
marks above them, the environment they run in, and running a command with an MCP session on its input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running

SHELL = {"sh", "console"}  # the blocks whose lines run in a shell
RUN = SHELL | {"python"}
PLACEHOLDER_API = "https://api.example.com"  # the documents' API; the demo API's address when run
VENV = Path(sys.executable).parent.parent  # the environment running the tests
# What an outer make (`make test`) passes down, and what the tests' conftest sets for every other test.
OUTER = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "TYPED_MCP_NO_CACHE"}
# What a block reads on its standard input: a stdio server started by it answers one MCP session.
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


def blocks(page: Path, root: Path) -> list[Block]:
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


def environment(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OUTER and not k.startswith("WEATHER_MCP_")}
    return {
        **env,
        "PATH": f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "TYPED_MCP_VENV": str(VENV),
        "TYPED_MCP_CACHE_DIR": str(cache),
        "SPEC_TOKEN": "docs-test-token",
    }


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
        try:
            proc.stdin.write("".join(json.dumps(message) + "\n" for message in SESSION))
            proc.stdin.flush()
        except BrokenPipeError:  # the command ended before reading its input: it needed none
            _close(proc.stdin)
    out: list[str] = []
    err: list[str] = []

    def read_out() -> None:
        for line in proc.stdout:
            out.append(line)
            if line.startswith('{"jsonrpc"') and json.loads(line).get("id") == SESSION[-1]["id"]:
                _close(proc.stdin)
        if not proc.stdin.closed:
            _close(proc.stdin)

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


def _close(stream: Any) -> None:
    """Close a child's input, whose unread rest a child that has ended no longer takes."""
    try:
        stream.close()
    except BrokenPipeError:
        pass  # the buffer is dropped and the pipe closed all the same


def answers(stdout: str) -> dict[int, dict]:
    """The JSON-RPC answers a stdio server wrote, by request id."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith('{"jsonrpc"'):
            message = json.loads(line)
            found[message.get("id")] = message
    return found


def served_the_demo(stdout: str, tools: tuple[str, ...]) -> None:
    """The server listed the demo's tools and answered get_weather from the demo API."""
    replies = answers(stdout)
    assert [tool["name"] for tool in replies[2]["result"]["tools"]] == list(tools)
    result = replies[3]["result"]
    assert not result.get("isError"), result
    assert set(result["structuredContent"]) >= {"temperature", "conditions"}


def serve_over_http(script: str, env: dict[str, str], tools: tuple[str, ...]) -> None:
    """A line that serves until stopped (the package's command line, uvicorn or gunicorn): run on
    127.0.0.1 and a free port (for the README's 0.0.0.0 and 8000), until its /health answers and an
    MCP client over streamable HTTP has listed the demo's tools and called one; then stopped."""
    port = free_port()
    script = re.sub(r"--port 8000\b", f"--port {port}", script).replace("--host 0.0.0.0", "--host 127.0.0.1")
    script = script.replace("-b 0.0.0.0:8000", f"-b 127.0.0.1:{port}")  # gunicorn's bind
    assert str(port) in script, script
    with running(["bash", "-c", f"exec {script}"], f"http://127.0.0.1:{port}/health", env, timeout=120):

        async def session() -> None:
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as client:
                assert [tool.name for tool in (await client.list_tools()).tools] == list(tools)
                result = await client.call_tool("get_weather", {"city": "Paris"})
                assert not result.is_error and "conditions" in result.structured_content, result

        anyio.run(session)
