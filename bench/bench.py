"""Benchmark: the MCP server typed-mcp generates vs FastMCP's `FastMCP.from_openapi`, on one OpenAPI spec.

    python bench/bench.py [--spec PATH] [--runs N] [--markdown OUT.md]

Default spec: the GitHub REST API document in `<repo>/../shared/corpus/github__api.github.com.json`.
FastMCP runs from the benchmark's own venv, `bench/.venv-fastmcp` (created here, `fastmcp` pinned to
FASTMCP_VERSION); typed-mcp and the MCP SDK client run from the repository's `.venv` (the script
re-executes itself with that interpreter when started with another one). Generated packages and
logs go to `bench/.work/`.

Measurements (every "median" is over --runs runs unless said otherwise):

1. cold start: spawning the stdio server -> the last byte of the last tools/list page, with a bare
   JSON-RPC client (the server's time; the client's JSON parsing is not counted), and the same
   through the MCP Python SDK `Client(StdioServerParameters(...))`, its parsing included;
2. warm tools/list latency per request (one page) and per complete listing (median and p95 over
   WARM_LISTS listings on one session), bare and through the SDK client, and the size of the
   tools/list result (compact JSON of all tools; exact wire bytes per page);
3. peak RSS (VmHWM from /proc/<pid>/status of the server process) after listing, and after calling
   every tool once with arguments synthesized from its inputSchema against a local upstream
   answering 200 `{}`;
4. in-process first-call latency (nothing imported beforehand but the server) and per-call overhead
   of one argument-less GET tool vs a direct HTTP GET to the same upstream (`bench/inproc_calls.py`,
   run with each server's own venv);
5. `typed-mcp generate` time and peak RSS on the spec: fresh, regenerating an unchanged folder, and
   regenerating with the generation cache of the previous run;
6. scaling on synthetic OpenAPI 3.0 specs (100, 1,000, 5,000 operations): generation time and cold start.

Servers are spawned through `/bin/sh -c 'echo $$ > PIDFILE; exec ...'`, so the recorded pid is
the server's own (exec keeps it) and its stderr goes to a log file under `bench/.work/logs/`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_env import ensure_venv, machine_info
from common import (
    DEFAULT_CALL_OPERATION,
    DEFAULT_SPEC,
    FASTMCP_PYTHON,
    FASTMCP_VENV,
    FASTMCP_VERSION,
    INPROC,
    INPROC_CALLS,
    MAIN_PYTHON,
    OPC_VENV,
    OPC_VERSION,
    SCALING_SIZES,
    WARM_LISTS,
    WORK,
    log,
    median,
    reexec_with_repo_venv,
)
from sessions import (
    CACHE_DIR,
    Measured,
    RawSession,
    ServerSpec,
    Session,
    fastmcp_server,
    generate,
    raw_session,
    run_measured,
    session,
    typed_mcp_server,
)
from synthetic_specs import synthetic_spec
from tables import (
    COMPARISON_HEADER,
    GENERATION_HEADER,
    GENERATION_LABELS,
    SCALING_HEADER,
    comparison_rows,
    fmt_s,
    generation_rows,
    markdown,
    print_tables,
    scaling_rows,
)


def generate_peer(spec: Path) -> Measured:
    """openapi-python-client on the same spec (its default post-hooks: ruff check --fix, ruff format), timed."""
    out = WORK / "openapi-python-client-out"
    shutil.rmtree(out, ignore_errors=True)
    tool = OPC_VENV / "bin" / "openapi-python-client"
    result = run_measured(
        [str(tool), "generate", "--path", str(spec), "--output-path", str(out), "--meta", "none"],
        env={"PATH": f"{OPC_VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    if result.returncode != 0 or not out.is_dir():
        raise RuntimeError(f"openapi-python-client exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    return result


def measure_generation(spec: Path, out: Path, package: str, runs: int) -> dict[str, Any]:
    """5. Fresh generation, and regeneration of an unchanged folder without and with the cache."""
    results: dict[str, list[Measured]] = {name: [] for name in GENERATION_LABELS}
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    for run in range(runs):
        log(f"generate {spec.name} (run {run + 1}/{runs})")
        results["fresh"].append(generate(spec, out, package, fresh=True))
        log(f"regenerate {spec.name} unchanged (run {run + 1}/{runs})")
        results["regenerate"].append(generate(spec, out, package, fresh=False))
        if run == 0:
            generate(spec, out, package, fresh=False, cache=True)  # fills the cache, not timed
        log(f"regenerate {spec.name} unchanged, cached (run {run + 1}/{runs})")
        results["regenerate cached"].append(generate(spec, out, package, fresh=False, cache=True))
        log(f"openapi-python-client generate {spec.name} (run {run + 1}/{runs})")
        results["peer"].append(generate_peer(spec))
    summary = {
        name: {
            "seconds": median([m.seconds for m in ms]),
            "peak_rss_kb": median([m.peak_rss_kb for m in ms]),
            "samples_s": [round(m.seconds, 2) for m in ms],
        }
        for name, ms in results.items()
    }
    summary["summary_line"] = (
        results["fresh"][-1].stdout.strip().splitlines()[-1:] or results["fresh"][-1].stderr.strip().splitlines()[-1:]
    )
    return summary


def measure_stdio(typed: ServerSpec, fast: ServerSpec, runs: int) -> dict[str, Any]:
    """1-3. Cold starts (interleaved), then one session each with warm lists and a call to every tool."""
    cold: dict[str, list[Session]] = {typed.label: [], fast.label: []}
    for run in range(runs):
        for server in (typed, fast):
            log(f"cold start {server.label} (run {run + 1}/{runs})")
            cold[server.label].append(session(server))
    raw: dict[str, list[RawSession]] = {typed.label: [], fast.label: []}
    for run in range(runs):
        for server in (typed, fast):
            log(f"raw JSON-RPC cold start {server.label} (run {run + 1}/{runs})")
            raw[server.label].append(raw_session(server, warm_lists=WARM_LISTS if run == runs - 1 else 0))
    full: dict[str, Session] = {}
    for server in (typed, fast):
        log(f"{server.label}: {WARM_LISTS} warm tools/list + call every tool")
        full[server.label] = session(server, warm_lists=WARM_LISTS, call_all=True)
    return {"cold": cold, "raw": raw, "full": full}


def measure_inproc(package_dir: Path, spec: Path, upstream_url: str, operation: str, runs: int) -> dict[str, Any]:
    """4. First call and per-call overhead in-process, each server in its own venv (median over runs)."""
    module = json.loads((package_dir / "typed-mcp.json").read_text())["module"]
    commands = {
        "typed-mcp": [
            str(MAIN_PYTHON),
            str(INPROC),
            "typed-mcp",
            "--src",
            str(package_dir / "src"),
            "--module",
            module,
        ],
        "FastMCP": [str(FASTMCP_PYTHON), str(INPROC), "fastmcp", "--spec", str(spec)],
    }
    results: dict[str, Any] = {}
    for label, cmd in commands.items():
        samples, failure = [], None
        for run in range(runs):
            log(f"in-process calls {label} (run {run + 1}/{runs})")
            done = subprocess.run(
                [*cmd, "--operation", operation, "--base-url", upstream_url, "--calls", str(INPROC_CALLS)],
                capture_output=True,
                text=True,
                env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            )
            if done.returncode != 0:
                failure = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
                break
            samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if failure or not samples:
            results[label] = {"error": failure}
            continue
        pick = lambda key, samples=samples: median([s[key] for s in samples])  # noqa: E731
        results[label] = {
            "tool": samples[0]["tool"],
            "first_call_s": pick("first_call_s"),
            "first_is_error": any(s["first_is_error"] for s in samples),
            "first_text": samples[0]["first_text"],
            "overhead_median_s": median([s["tool_median_s"] - s["direct_median_s"] for s in samples]),
            "overhead_p99_s": median([s["tool_p99_s"] - s["direct_p99_s"] for s in samples]),
            "tool_median_s": pick("tool_median_s"),
            "tool_p99_s": pick("tool_p99_s"),
            "direct_median_s": pick("direct_median_s"),
            "direct_p99_s": pick("direct_p99_s"),
            "errors": sum(s["errors"] for s in samples),
            "build_s": pick("build_s"),
        }
    return results


def measure_scaling(sizes: tuple[int, ...], upstream_url: str, runs: int) -> list[dict[str, Any]]:
    """6. Generation time and cold start (typed-mcp, and FastMCP for reference) per synthetic size."""
    rows = []
    for size in sizes:
        spec = WORK / "specs" / f"synthetic-{size}.json"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(json.dumps(synthetic_spec(size), indent=1))
        out = WORK / f"synthetic-{size}-mcp"
        gens, typed_cold, fast_cold = [], [], []
        for run in range(runs):
            log(f"synthetic {size}: generate (run {run + 1}/{runs})")
            gens.append(generate(spec, out, f"synthetic-{size}-mcp", fresh=True))
            log(f"synthetic {size}: cold starts (run {run + 1}/{runs})")
            typed_cold.append(session(typed_mcp_server(out, upstream_url)).cold_s)
            fast_cold.append(session(fastmcp_server(spec, upstream_url)).cold_s)
        rows.append(
            {
                "operations": size,
                "generate_s": median([g.seconds for g in gens]),
                "generate_peak_rss_kb": median([g.peak_rss_kb for g in gens]),
                "typed_cold_s": median(typed_cold),
                "fastmcp_cold_s": median(fast_cold),
            }
        )
    return rows


def growth(rows: list[dict[str, Any]], key: str) -> str:
    """Log-log slope between consecutive sizes: ~1 is linear, <1 sub-linear (fixed costs), >1 super-linear."""
    slopes = [
        math.log(b[key] / a[key]) / math.log(b["operations"] / a["operations"])
        for a, b in zip(rows, rows[1:], strict=False)
        if a[key] > 0 and b[key] > 0
    ]
    if not slopes:
        return "n/a"
    verdict = "about linear or better" if slopes[-1] <= 1.2 else "super-linear"
    return f"slopes {', '.join(f'{s:.2f}' for s in slopes)} -> {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spec", type=Path, default=DEFAULT_SPEC, help=f"OpenAPI JSON document (default {DEFAULT_SPEC})"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (medians are reported)")
    parser.add_argument("--markdown", type=Path, help="also write the tables as Markdown here")
    parser.add_argument(
        "--operation",
        default=DEFAULT_CALL_OPERATION,
        help='argument-less GET called in-process (default "GET /emojis")',
    )
    parser.add_argument(
        "--scaling-sizes", default=",".join(map(str, SCALING_SIZES)), help="synthetic spec sizes; empty to skip"
    )
    parser.add_argument("--json", type=Path, help="also write the raw results as JSON here")
    parser.add_argument(
        "--generation-only", action="store_true", help="only the generation table (typed-mcp and openapi-python-client)"
    )
    args = parser.parse_args(argv)

    spec = args.spec.resolve()
    WORK.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    fastmcp_version = ensure_venv(FASTMCP_VENV, "fastmcp", FASTMCP_VERSION)
    machine["openapi-python-client"] = ensure_venv(OPC_VENV, "openapi-python-client", OPC_VERSION)
    machine["FastMCP"] = fastmcp_version
    package = re.sub(r"[^a-z0-9]+", "-", spec.stem.lower()).strip("-")[:40].strip("-") + "-mcp"
    package_dir = WORK / package
    started = time.monotonic()

    gen = measure_generation(spec, package_dir, package, args.runs)
    generation_table = (
        f"Generation of {spec.name} ({gen['summary_line'][0] if gen['summary_line'] else ''})",
        GENERATION_HEADER,
        generation_rows(gen),
    )
    import payments  # bench/payments.py: Stripe's shape, where closures are the whole API

    payments_table = (
        "Generation and serving of the synthetic payments API",
        payments.HEADER,
        payments.rows(payments.measure(args.runs)),
    )
    if args.generation_only:
        machine["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        title = f"typed-mcp generate vs openapi-python-client on {spec.name} (medians of {args.runs} runs)"
        print_tables(title, [generation_table, payments_table], [])
        if args.markdown:
            args.markdown.write_text(markdown(title, machine, [generation_table, payments_table], []), encoding="utf-8")
        return 0
    from harness.demo.process import HttpServer, Reply

    with HttpServer() as upstream:
        upstream.default = Reply(200, b"{}")  # every request: 200 with an (empty) JSON object
        stdio = measure_stdio(
            typed_mcp_server(package_dir, upstream.url), fastmcp_server(spec, upstream.url), args.runs
        )
        inproc = measure_inproc(package_dir, spec, upstream.url, args.operation, args.runs)
        sizes = tuple(int(s) for s in args.scaling_sizes.split(",") if s.strip())
        scaling = measure_scaling(sizes, upstream.url, args.runs) if sizes else []
    machine["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    machine["benchmark wall time"] = f"{(time.monotonic() - started) / 60:.1f} min"

    title = f"typed-mcp vs FastMCP {fastmcp_version} from_openapi on {spec.name} (medians of {args.runs} runs)"
    tables = [
        (
            "Servers (stdio, MCP Python SDK client; in-process rows via Client(server))",
            COMPARISON_HEADER,
            comparison_rows(stdio, inproc),
        ),
        generation_table,
        payments_table,
    ]
    if scaling:
        tables.append(("Scaling on synthetic OpenAPI 3.0 specs", SCALING_HEADER, scaling_rows(scaling)))
    notes = [
        f"machine: {machine['nproc']} cores, {machine['cpu']}, {machine['memory']}, Python {machine['python']}; "
        f"load average {machine['load average at start']} (start) / {machine['load average at end']} (end)"
    ]
    for label in ("typed-mcp", "FastMCP"):
        full = stdio["full"][label]
        if full.exception_samples:
            notes.append(f"{label}: sample exceptions while calling every tool: " + " | ".join(full.exception_samples))
        info = inproc.get(label, {})
        if "error" in info:
            notes.append(f"{label}: in-process measurement failed: {info['error']}")
        elif info:
            notes.append(
                f"{label}: in-process tool {info['tool']!r} ({args.operation}); "
                f"first reply isError={info['first_is_error']}, "
                f"errors in timed calls: {info['errors']}; server build in-process {fmt_s(info['build_s'])}"
            )
    if scaling:
        notes.append(f"scaling, typed-mcp generate: {growth(scaling, 'generate_s')}")
        notes.append(f"scaling, typed-mcp cold start: {growth(scaling, 'typed_cold_s')}")
        notes.append(f"scaling, FastMCP cold start: {growth(scaling, 'fastmcp_cold_s')}")
    notes.append(
        "server time = measured by a bare JSON-RPC client over stdio (protocol 2025-06-18), from writing a request to "
        "the last byte of its response, the client's own JSON parsing not counted; cold start = spawn of the server "
        "process until the last tools/list page has arrived (the scaling table: through the SDK Client, cache off); "
        "first call = in-process, the tool's name taken from the published catalog, nothing imported before; "
        "payload = compact JSON of all Tool objects as the client parsed them; peak RSS = VmHWM of the server process; "
        "overhead = median (p99) in-process tool-call latency minus median (p99) direct GET to the same upstream "
        "(httpx for typed-mcp, httpx2 for FastMCP, i.e. the client each server uses); generate peak RSS = GNU time %M "
        "(largest RSS of the CLI or of a process it waited for, e.g. its verify step)."
    )
    print_tables(title, tables, notes)
    if args.markdown:
        args.markdown.write_text(markdown(title, machine, tables, notes), encoding="utf-8")
        log(f"wrote {args.markdown}")
    if args.json:
        raw = {
            "machine": machine,
            "generation": gen,
            "inproc": inproc,
            "scaling": scaling,
            "stdio": {
                k: {label: ([vars(s) for s in v] if isinstance(v, list) else vars(v)) for label, v in val.items()}
                for k, val in stdio.items()
            },
        }
        args.json.write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    reexec_with_repo_venv()
    sys.exit(main())
