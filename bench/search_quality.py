"""Search quality of a generated package's discovery mode: top-1 and top-5 recall, median search time.

    python bench/search_quality.py PACKAGE_DIR TASKS.json [--half even|odd] [--misses] [--verbose]

TASKS.json is a JSON list of {"query": str, "operation": "METHOD /path", "also": [...]} (a hit on
`operation` or on any `also` entry counts). `--half even` keeps the tasks at even indexes (0, 2, ...:
the tuning half), `--half odd` the others (the held-out half); `--misses` prints the tasks whose
operation is not first, with its rank. Each query goes through the
package's own search code (`src/<module>/_runtime/search.py`, loaded from the package, in this
process) over its `search.json`, exactly as the `search_tools` tool runs it (every tool selected).
An operation the package has no tool for counts as a miss (and is reported).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

LIMIT = 10  # search_tools' default limit; top-5 is read from its first five results


def load_search(package: Path):
    module = json.loads((package / "typed-mcp.json").read_text())["module"]
    source = package / "src" / module / "_runtime" / "search.py"
    spec = importlib.util.spec_from_file_location(f"_search_of_{module}", source)
    search = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = search  # dataclasses and typing resolve the module by name
    spec.loader.exec_module(search)
    return search, package / "src" / module / "search.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path, help="a generated package's folder (holding typed-mcp.json)")
    parser.add_argument("tasks", type=Path, help="JSON list of {query, operation}")
    parser.add_argument("--half", choices=("even", "odd"), help="only the tasks at even (or odd) indexes")
    parser.add_argument("--misses", action="store_true", help="print the tasks whose operation is not first")
    parser.add_argument("--verbose", "-v", action="store_true", help="print each query's rank and top result")
    args = parser.parse_args(argv)

    operations = json.loads((args.package / "typed-mcp.json").read_text())["tools"]  # tool -> "METHOD /path"
    tool_of = {operation: tool for tool, operation in operations.items()}
    tasks = json.loads(args.tasks.read_text())
    if args.half is not None:
        tasks = tasks[args.half == "odd" :: 2]
    search, documents = load_search(args.package)
    started = time.perf_counter()
    index = search.SearchIndex(search.load_documents(documents))
    built = time.perf_counter() - started

    top1 = top5 = 0
    times = []
    for task in tasks:
        expected = tool_of.get(task["operation"])
        accepted = {tool_of[op] for op in [task["operation"], *task.get("also", [])] if op in tool_of}
        started = time.perf_counter()
        results = index.search(task["query"], LIMIT)
        times.append(time.perf_counter() - started)
        names = [result["name"] for result in results]
        rank = next((number for number, name in enumerate(names, 1) if name in accepted), None)
        top1 += rank == 1
        top5 += rank is not None and rank <= 5
        if args.verbose or expected is None or args.misses and rank != 1:
            note = "no tool for this operation" if expected is None else f"rank {rank or '>' + str(LIMIT)}"
            print(f"{note:>14}  {task['query']!r} -> {expected}; top: {', '.join(names[:3])}")
    count = len(tasks)
    print(
        f"{args.tasks.name}{f' ({args.half} half)' if args.half else ''}: {count} tasks over {len(index.docs)} tools: "
        f"top-1 {top1}/{count} ({top1 / count:.0%}), top-5 {top5}/{count} ({top5 / count:.0%}), "
        f"median search {statistics.median(times) * 1000:.2f} ms (index built in {built * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
