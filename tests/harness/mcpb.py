"""The official MCPB tooling (`@anthropic-ai/mcpb`, pinned in tests/node): its CLI, and its
`getMcpConfigForManifest`, which resolves a bundle's command the way a desktop host does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from harness.node_tools import NODE_DIR, node_script, npm_install

MCPB_BIN = NODE_DIR / "node_modules" / ".bin" / "mcpb"


def mcpb(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`mcpb ARGS...` (validate, pack, unpack, info); the caller checks the exit code."""
    npm_install()
    return subprocess.run([str(MCPB_BIN), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def host_config(bundle_dir: Path, user_config: dict[str, Any]) -> dict[str, Any] | None:
    """The {"command", "args", "env"} a host runs for the unpacked bundle with these user_config
    values; None when the library refuses (a required value is missing)."""
    return node_script("mcpb_config.mjs", str(bundle_dir), json.dumps(user_config))
