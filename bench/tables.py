"""Report: the benchmark's results as terminal tables and as Markdown."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from common import INPROC_CALLS, MIB, WARM_LISTS, median, quantile

GENERATION_LABELS = {
    "fresh": "typed-mcp generate (fresh folder, no cache)",
    "regenerate": "regenerate, nothing changed (no cache)",
    "regenerate cached": "regenerate, nothing changed (cache of the previous run)",
    "peer": "openapi-python-client generate (a client, not MCP; omits responses it cannot type)",
}


def fmt_s(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value * 1000:.1f} ms" if abs(value) < 1 else f"{value:.2f} s"


def fmt_bytes(value: float) -> str:
    return "n/a" if not value else f"{value / MIB:.2f} MiB"


def fmt_kb(value: float) -> str:
    return "n/a" if not value else f"{value / 1024:.0f} MiB"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return "n/a"
    return f"{a / b:.2f}x"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("yes" if ok else "NO")


Row = tuple[str, str, str, str, str, str]


def comparison_rows(stdio: dict[str, Any], inproc: dict[str, Any]) -> list[Row]:
    """metric | typed-mcp | FastMCP | ratio typed/FastMCP | target | met."""
    typed_cold, fast_cold = stdio["cold"]["typed-mcp"], stdio["cold"]["FastMCP"]
    typed_full, fast_full = stdio["full"]["typed-mcp"], stdio["full"]["FastMCP"]
    rows: list[Row] = []

    def add(metric: str, a: float, b: float, fmt: Callable[[float], str], target: str, ok: bool | None) -> None:
        rows.append((metric, fmt(a), fmt(b), ratio(a, b), target, verdict(ok)))

    typed_raw, fast_raw = stdio["raw"]["typed-mcp"], stdio["raw"]["FastMCP"]
    tc, fc = median([s.cold_s for s in typed_raw]), median([s.cold_s for s in fast_raw])
    add("cold start -> complete tools/list, server time (median)", tc, fc, fmt_s, "<= 0.2x FastMCP", tc <= fc / 5)
    tc, fc = median([s.cold_s for s in typed_cold]), median([s.cold_s for s in fast_cold])
    add("  the same through the Python SDK client (its parsing included)", tc, fc, fmt_s, "", None)
    rows.append(
        (
            "tools listed (with outputSchema)",
            f"{typed_full.tools} ({typed_full.with_output_schema})",
            f"{fast_full.tools} ({fast_full.with_output_schema})",
            "",
            "",
            "",
        )
    )
    tr, fr = typed_raw[-1].request_s, fast_raw[-1].request_s
    add(
        f"warm tools/list request, server time, median of {len(tr)} / {len(fr)}",
        median(tr),
        median(fr),
        fmt_s,
        "< 50 ms",
        median(tr) < 0.050,
    )
    add("  warm tools/list request, server time, p95", quantile(tr, 0.95), quantile(fr, 0.95), fmt_s, "", None)
    tw, fw = median(typed_raw[-1].warm_s), median(fast_raw[-1].warm_s)
    add(f"  warm complete listing (all pages), server time, median of {WARM_LISTS}", tw, fw, fmt_s, "", None)
    tw, fw = median(typed_full.warm_s), median(fast_full.warm_s)
    add(f"  warm complete listing through the Python SDK client, median of {WARM_LISTS}", tw, fw, fmt_s, "", None)
    add(
        "tools/list payload (all tools, compact JSON)",
        typed_full.payload_bytes,
        fast_full.payload_bytes,
        fmt_bytes,
        "<= FastMCP",
        typed_full.payload_bytes <= fast_full.payload_bytes,
    )
    ts, fs = sum(typed_raw[-1].page_bytes), sum(fast_raw[-1].page_bytes)
    add("  tools/list bytes on the wire (all pages)", ts, fs, fmt_bytes, "", None)
    ts, fs = max(typed_raw[-1].page_bytes), max(fast_raw[-1].page_bytes)
    add(
        "largest tools/list message on the wire "
        f"({len(typed_raw[-1].page_bytes)} / {len(fast_raw[-1].page_bytes)} pages)",
        ts,
        fs,
        fmt_bytes,
        "<= 10 MiB",
        ts <= 10 * MIB,
    )
    th, fh = median([s.hwm_after_list_kb for s in typed_cold]), median([s.hwm_after_list_kb for s in fast_cold])
    add("peak RSS after tools/list (median)", th, fh, fmt_kb, "< 0.5x FastMCP", th < fh / 2)
    th, fh = typed_full.hwm_after_calls_kb, fast_full.hwm_after_calls_kb
    add("peak RSS after calling every tool", th, fh, fmt_kb, "< 0.5x FastMCP", th < fh / 2)
    rows.append(
        (
            "every tool called once: isError / raised",
            f"{typed_full.call_errors} / {typed_full.call_exceptions} of {typed_full.calls}",
            f"{fast_full.call_errors} / {fast_full.call_exceptions} of {fast_full.calls}",
            "",
            "",
            "",
        )
    )
    add("  time to call every tool once", typed_full.call_seconds, fast_full.call_seconds, fmt_s, "", None)
    ti, fi = inproc.get("typed-mcp", {}), inproc.get("FastMCP", {})
    get = lambda d, k: d.get(k, math.nan)  # noqa: E731
    add(
        "in-process first call (cold)",
        get(ti, "first_call_s"),
        get(fi, "first_call_s"),
        fmt_s,
        "< 300 ms",
        get(ti, "first_call_s") < 0.3 if "first_call_s" in ti else None,
    )
    add(
        f"per-call overhead vs direct GET, median ({INPROC_CALLS} calls)",
        get(ti, "overhead_median_s"),
        get(fi, "overhead_median_s"),
        fmt_s,
        "< 1 ms",
        get(ti, "overhead_median_s") < 0.001 if "overhead_median_s" in ti else None,
    )
    add("per-call overhead vs direct GET, p99", get(ti, "overhead_p99_s"), get(fi, "overhead_p99_s"), fmt_s, "", None)
    add("  tool call latency, median", get(ti, "tool_median_s"), get(fi, "tool_median_s"), fmt_s, "", None)
    add("  direct GET latency, median", get(ti, "direct_median_s"), get(fi, "direct_median_s"), fmt_s, "", None)
    return rows


def generation_rows(gen: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [
        (
            label,
            fmt_s(gen[name]["seconds"]),
            fmt_kb(gen[name]["peak_rss_kb"]),
            ", ".join(f"{s:.2f}" for s in gen[name]["samples_s"]),
        )
        for name, label in GENERATION_LABELS.items()
    ]


def scaling_rows(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    out = [
        (
            f"{r['operations']:,}",
            fmt_s(r["generate_s"]),
            f"{r['generate_s'] / r['operations'] * 1000:.1f} ms",
            fmt_kb(r["generate_peak_rss_kb"]),
            fmt_s(r["typed_cold_s"]),
            fmt_s(r["fastmcp_cold_s"]),
            ratio(r["typed_cold_s"], r["fastmcp_cold_s"]),
        )
        for r in rows
    ]
    return out


SCALING_HEADER = (
    "operations",
    "generate",
    "per op",
    "generate peak RSS",
    "typed-mcp cold start",
    "FastMCP cold start",
    "ratio",
)
COMPARISON_HEADER = ("metric", "typed-mcp", "FastMCP", "typed/FastMCP", "target", "met")
GENERATION_HEADER = ("typed-mcp generate", "median time", "peak RSS", "samples (s)")


def print_tables(
    title: str, tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]], notes: list[str]
) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None
    if Console is not None:
        console = Console(width=200)
        console.print(f"[bold]{title}[/bold]")
        for caption, header, rows in tables:
            table = Table(title=caption, title_justify="left")
            for i, column in enumerate(header):
                table.add_column(column, justify="left" if i == 0 else "right")
            for row in rows:
                table.add_row(*row)
            console.print(table)
        for note in notes:
            console.print(note, markup=False)
        return
    print(title)
    for caption, header, rows in tables:
        widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]
        print(f"\n{caption}")
        for row in (header, *rows):
            print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    for note in notes:
        print(note)


def markdown(
    title: str,
    machine: dict[str, str],
    tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]],
    notes: list[str],
) -> str:
    lines = [f"# {title}", "", "| machine | |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in machine.items()]
    for caption, header, rows in tables:
        lines += [
            "",
            f"## {caption}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|",
        ]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    lines += ["", "## Notes", ""] + [f"- {note}" for note in notes] + [""]
    return "\n".join(lines)
