"""Search quality of a generated package's discovery mode: top-1 and top-5 recall, median search time.

    python bench/search_quality.py PACKAGE_DIR TASKS.json [--half even|odd] [--misses] [--verbose]
                                   [--peer SPEC.json]

TASKS.json is a JSON list of {"query": str, "operation": "METHOD /path", "also": [...]} (a hit on
`operation` or on any `also` entry counts). `--half even` keeps the tasks at even indexes (0, 2, ...:
the tuning half), `--half odd` the others (the held-out half); `--misses` prints the tasks whose
operation is not first, with its rank. Each query goes through the
package's own search code (`src/<module>/_runtime/search.py`, loaded from the package, in this
process) over its `search.json`, exactly as the `search_tools` tool runs it (every tool selected).
An operation the package has no tool for counts as a miss (and is reported).

`--peer SPEC.json` also runs the same tasks through the peer, FastMCP `from_openapi` on that spec
with its BM25 search transform (bench/fastmcp_search.py, in the benchmark's FastMCP venv), and
prints its figures on the next line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT = 10  # search_tools' default limit; top-5 is read from its first five results
PEER_SCRIPT = Path(__file__).resolve().parent / "fastmcp_search.py"


def load_search(package: Path):
    module = json.loads((package / "typed-mcp.json").read_text())["module"]
    source = package / "src" / module / "_runtime" / "search.py"
    spec = importlib.util.spec_from_file_location(f"_search_of_{module}", source)
    search = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = search  # dataclasses and typing resolve the module by name
    spec.loader.exec_module(search)
    return search, package / "src" / module / "search.json"


def summary(label, tasks, ranked, times, tools, args, tool_of) -> str:
    """One line of figures for `ranked` (each task's operations, best first), after the misses asked for."""
    top1 = top5 = 0
    for task, operations in zip(tasks, ranked, strict=True):
        accepted = {task["operation"], *task.get("also", [])}
        rank = next((number for number, operation in enumerate(operations, 1) if operation in accepted), None)
        top1 += rank == 1
        top5 += rank is not None and rank <= 5
        missing = task["operation"] not in tool_of
        if args.verbose or missing or args.misses and rank != 1:
            note = "no tool for this operation" if missing else f"rank {rank or '>' + str(LIMIT)}"
            print(f"{note:>14}  {task['query']!r} -> {task['operation']}; top: {', '.join(operations[:3])}")
    count = len(tasks)
    return (
        f"{label}: {count} tasks over {tools} tools: top-1 {top1}/{count} ({top1 / count:.0%}), "
        f"top-5 {top5}/{count} ({top5 / count:.0%}), median search {statistics.median(times):.2f} ms"
    )


def run_peer(spec: Path, tasks: list[dict]) -> dict:
    """The tasks ranked by FastMCP's BM25 search transform (in the benchmark's FastMCP venv)."""
    sys.path.insert(0, str(PEER_SCRIPT.parent))
    import bench  # the venv and version the side-by-side benchmark uses

    version = bench.ensure_venv(bench.FASTMCP_VENV, "fastmcp", bench.FASTMCP_VERSION)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
        json.dump(tasks, handle)
        handle.flush()
        done = subprocess.run(
            [str(bench.FASTMCP_PYTHON), str(PEER_SCRIPT), str(spec), handle.name],
            capture_output=True,
            text=True,
            check=True,
        )
    return {**json.loads(done.stdout), "version": version}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path, help="a generated package's folder (holding typed-mcp.json)")
    parser.add_argument("tasks", type=Path, help="JSON list of {query, operation}")
    parser.add_argument("--half", choices=("even", "odd"), help="only the tasks at even (or odd) indexes")
    parser.add_argument("--misses", action="store_true", help="print the tasks whose operation is not first")
    parser.add_argument("--verbose", "-v", action="store_true", help="print each query's rank and top result")
    parser.add_argument("--peer", type=Path, metavar="SPEC", help="also rank the tasks with FastMCP's BM25 search")
    args = parser.parse_args(argv)

    operations = json.loads((args.package / "typed-mcp.json").read_text())["tools"]  # tool -> "METHOD /path"
    tool_of = {operation: tool for tool, operation in operations.items()}
    tasks = json.loads(args.tasks.read_text())
    if args.half is not None:
        tasks = tasks[args.half == "odd" :: 2]
    search, documents = load_search(args.package)
    started = time.perf_counter()
    found, thesaurus = search.load(documents)
    index = search.SearchIndex(found, thesaurus=thesaurus)
    built = time.perf_counter() - started

    ranked, times = [], []
    for task in tasks:
        started = time.perf_counter()
        results = index.search(task["query"], LIMIT)
        times.append((time.perf_counter() - started) * 1000)
        ranked.append([operations[result["name"]] for result in results])
    label = f"{args.tasks.name}{f' ({args.half} half)' if args.half else ''}"
    print(summary(f"{label}: typed-mcp", tasks, ranked, times, len(index.docs), args, tool_of))
    print(f"  (index built in {built * 1000:.0f} ms)")
    if args.peer is not None:
        peer = run_peer(args.peer, tasks)
        print(
            summary(
                f"{label}: FastMCP {peer['version']} BM25SearchTransform",
                tasks,
                peer["ranked"],
                peer["ms"],
                peer["tools"],
                args,
                tool_of,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
