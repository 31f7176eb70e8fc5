"""tools/list of big APIs in each serving mode, side by side with FastMCP `from_openapi` (one run).

For GitHub, Cloudflare and a synthetic payments API of Stripe's shape (tests/harness/synthetic.py),
generates the typed-mcp package, then lists it over stdio with a bare JSON-RPC client in full mode,
with its largest toolset, read-only and in discovery mode, and lists FastMCP's server on the same
spec (full mode: it has no other). Bytes are the JSON-RPC messages on the wire; tokens are bytes / 4,
the usual estimate for JSON. Writes a Markdown table (`--markdown`).

    .venv/bin/python bench/modes.py --markdown bench/MODES.md
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import bench_env
import common  # the benchmark's paths, venvs and statistics (and tests/ on sys.path)
import payments
import sessions  # the benchmark's stdio sessions

from harness.demo.process import HttpServer, Reply

SPECS = {
    "GitHub": common.CORPUS / "github__api.github.com.json",
    "Cloudflare": common.CORPUS / "cloudflare__openapi.json",
}


def generate(spec: Path, out: Path) -> dict:
    if not out.is_dir() or (out / "typed-mcp.json").stat().st_mtime < spec.stat().st_mtime:
        subprocess.run(
            [sys.executable, "-m", "typed_mcp", "generate", str(spec), "--out", str(out), "-q", "--no-snapshot"],
            check=True,
        )
    return json.loads((out / "typed-mcp.json").read_text())


def largest_toolset(package: Path, module: str) -> tuple[str, int] | None:
    """The package's biggest toolset (the worst case of one toolset), or None when the spec has no tags."""
    sys.path.insert(0, str(package / "src"))
    try:
        toolsets = importlib.import_module(f"{module}.tools").TOOLSETS
    finally:
        sys.path.pop(0)
    if not toolsets:
        return None
    name = max(sorted(toolsets), key=lambda key: len(toolsets[key]))
    return name, len(toolsets[name])


def listing(server: sessions.ServerSpec) -> tuple[int, int, float]:
    """(tools, bytes on the wire, seconds from spawn to the last page)."""
    started = time.perf_counter()
    raw = sessions.raw_session(server)
    return raw.tools, sum(raw.page_bytes), time.perf_counter() - started


def row(api: str, mode: str, tools: int | str, size: int | None, seconds: float | None) -> list[str]:
    if size is None:
        return [api, mode, str(tools), "-", "-", "-"]
    return [api, mode, str(tools), f"{size:,}", f"{size // 4:,}", f"{seconds:.1f} s"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="write the table here")
    parser.add_argument("--no-fastmcp", action="store_true", help="only typed-mcp")
    args = parser.parse_args(argv)
    common.WORK.mkdir(parents=True, exist_ok=True)
    specs = {**SPECS, "payments (synthetic, Stripe's shape)": payments.spec_file()}
    fastmcp = None if args.no_fastmcp else bench_env.ensure_venv(common.FASTMCP_VENV, "fastmcp", common.FASTMCP_VERSION)
    rows = []
    with HttpServer() as upstream:
        upstream.default = Reply(200, b"{}")
        for api, spec in specs.items():
            package = common.WORK / f"modes-{spec.stem}"
            module = generate(spec, package)["module"]
            base = sessions.typed_mcp_server(package, upstream.url)
            modes = {"full": []}
            if (largest := largest_toolset(package, module)) is not None:
                modes[f"largest toolset ({largest[0]}, {largest[1]} tools)"] = ["--toolsets", largest[0]]
            modes.update({"read-only": ["--read-only"], "discovery": ["--discovery"]})
            for mode, flags in modes.items():
                server = sessions.ServerSpec(base.label, [*base.argv, *flags], base.env)
                rows.append(row(api, f"typed-mcp {mode}", *listing(server)))
                common.log(f"{api}: {rows[-1]}")
            if fastmcp is not None:
                peer = sessions.fastmcp_server(spec, upstream.url)
                try:
                    rows.append(row(api, f"FastMCP {fastmcp} from_openapi", *listing(peer)))
                except (RuntimeError, TimeoutError) as exc:
                    rows.append(row(api, f"FastMCP {fastmcp} from_openapi: {exc}", "-", None, None))
                common.log(f"{api}: {rows[-1]}")
    header = ["API", "mode", "tools", "tools/list bytes", "~tokens (bytes/4)", "start to last page"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = (
        f"# tools/list by serving mode (`python bench/modes.py`, one run, load average {load})\n\n"
        + "\n".join(lines)
        + "\n"
    )
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    common.reexec_with_repo_venv()
    sys.exit(main())
