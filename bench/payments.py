"""Generation and serving of the synthetic payments API (Stripe's shape: `tests/harness/synthetic.py`,
475 operations whose expandable fields, `anyOf: [id, $ref]`, make 380 models one recursive group).

    python bench/payments.py [--runs N] [--markdown OUT.md]

`make bench` runs it through `bench/bench.py` (a table of `bench/GENERATION.md`). It prints, as medians
over the runs: `typed-mcp generate` wall time, CPU time and peak RSS (GNU time's, the largest process of the
run), and the generated server's peak RSS (VmHWM) after listing its tools through the MCP Python SDK
client, and after then calling one tool (its first call builds the tool's models). The targets: well
under 30 s and under 500 MB for generation. Not a test: timings on a shared machine are noise, so
the figures are printed and recorded, and the structure behind them (no model is built at import)
is what `tests/e2e/test_budget.py` asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

import bench_env
import common
import sessions
import tables

from harness import synthetic

PACKAGE = "payments-mcp"
CALLED = "get_accounts_account"  # its answer model is in the recursive group
GENERATION_SECONDS, GENERATION_MB = 30.0, 500  # the targets


def spec_file() -> Path:
    """The payments spec, written where the benchmarks keep their inputs."""
    common.WORK.mkdir(parents=True, exist_ok=True)
    path = common.WORK / "payments-openapi.json"
    path.write_text(json.dumps(synthetic.payments_spec()))
    return path


def measure(runs: int) -> dict[str, Any]:
    """`runs` fresh generations (no cache), then one server session: list, call one tool."""
    from harness.demo.process import HttpServer, Reply

    spec, out = spec_file(), common.WORK / PACKAGE
    generated, cpu = [], []
    for run in range(runs):
        common.log(f"generate {spec.name} (run {run + 1}/{runs})")
        before = _children_cpu()
        generated.append(sessions.generate(spec, out, PACKAGE, fresh=True))
        cpu.append(_children_cpu() - before)
    with HttpServer() as upstream:
        # 200 `{}` for every request: the answer is validated with the full model (and refused:
        # required fields are missing), so the first call builds that model's validator.
        upstream.default = Reply(200, b"{}")
        served = sessions.session(sessions.typed_mcp_server(out, upstream.url), call=[CALLED])
    return {
        "seconds": common.median([m.seconds for m in generated]),
        "peak_rss_kb": common.median([m.peak_rss_kb for m in generated]),
        "samples_s": [round(m.seconds, 2) for m in generated],
        "samples_mb": [round(m.peak_rss_kb / 1024) for m in generated],
        "cpu_s": common.median(cpu),
        "samples_cpu_s": [round(c, 2) for c in cpu],
        "tools": served.tools,
        "cold_s": served.cold_s,
        "hwm_after_list_kb": served.hwm_after_list_kb,
        "hwm_after_call_kb": served.hwm_after_calls_kb,
        "call_s": served.call_seconds,
    }


def _children_cpu() -> float:
    """CPU seconds (user + sys) of every finished child process so far, theirs included: on a shared
    machine the wall time follows the load, the CPU time much less."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


HEADER = ("payments API (synthetic, Stripe's shape)", "median", "samples", "target")


def rows(result: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    seconds, mb = result["seconds"], result["peak_rss_kb"] / 1024
    return [
        (
            "typed-mcp generate (fresh folder, no cache): wall time",
            tables.fmt_s(seconds),
            ", ".join(f"{s:.2f}" for s in result["samples_s"]),
            f"< {GENERATION_SECONDS:.0f} s: {tables.verdict(seconds < GENERATION_SECONDS)}",
        ),
        (
            "typed-mcp generate: CPU time (user + sys, every process)",
            tables.fmt_s(result["cpu_s"]),
            ", ".join(f"{s:.2f}" for s in result["samples_cpu_s"]),
            "",
        ),
        (
            "typed-mcp generate: peak RSS (largest process)",
            f"{mb:.0f} MiB",
            ", ".join(str(s) for s in result["samples_mb"]),
            f"< {GENERATION_MB} MB: {tables.verdict(result['peak_rss_kb'] * 1024 < GENERATION_MB * 10**6)}",
        ),
        (
            f"server: cold start to the complete tools/list ({result['tools']} tools, SDK client)",
            tables.fmt_s(result["cold_s"]),
            "1 run",
            "",
        ),
        ("server: peak RSS after listing", tables.fmt_kb(result["hwm_after_list_kb"]), "1 run", ""),
        (
            f"server: peak RSS after then calling {CALLED} once ({tables.fmt_s(result['call_s'])})",
            tables.fmt_kb(result["hwm_after_call_kb"]),
            "1 run",
            "",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="generation runs (medians are reported)")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown here")
    args = parser.parse_args(argv)
    machine = bench_env.machine_info()
    table = ("Generation and serving of the synthetic payments API", HEADER, rows(measure(args.runs)))
    machine["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    title = f"typed-mcp on the synthetic payments API (medians of {args.runs} runs)"
    tables.print_tables(title, [table], [])
    if args.markdown:
        args.markdown.write_text(tables.markdown(title, machine, [table], []), encoding="utf-8")
    return 0


if __name__ == "__main__":
    common.reexec_with_repo_venv()
    sys.exit(main())
