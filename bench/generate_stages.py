"""`python bench/generate_stages.py SPEC OUT [--cache] [--no-verify]`: one `pipeline.generate` with the
command line's defaults, printing the seconds since the start at which each stage begins (and this
process's peak RSS so far), then the stages' timings and the peak RSS of this process and of its
largest child (bench/GENERATION.md's Microsoft Graph rows; run it under `/usr/bin/time -v` for the
whole run's figures)."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from typed_mcp.options import GenerateOptions
from typed_mcp.pipeline import generate


def main() -> None:
    source, out = sys.argv[1], Path(sys.argv[2])
    options = GenerateOptions(source=source, out=out, verify="--no-verify" not in sys.argv, cache="--cache" in sys.argv)
    start = time.perf_counter()

    def step(text: str) -> None:
        if "listing tools with the MCP SDK:" not in text:  # the per-chunk progress
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            print(f"{time.perf_counter() - start:7.1f}s {peak:6d} MiB {text}", file=sys.stderr, flush=True)

    result = generate(options, step=step)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print(json.dumps(result.timings), f"peak RSS MiB: this process {own}, largest child {children}", file=sys.stderr)


if __name__ == "__main__":
    main()
