"""Search quality of a generated package's discovery mode: top-1 and top-5 recall, median search time,
one search plus one browse; and known-item search over whole APIs.

    python bench/search_quality.py PACKAGE_DIR TASKS.json [--half even|odd] [--misses] [--verbose]
                                   [--peer SPEC] [--semantic] [--phrasing user|agent|terse]
    python bench/search_quality.py --known-item SOURCE... [--json] [--queries FILE] [--write-queries FILE]
                                   [--ref-root DIR]

PACKAGE_DIR may be a spec file instead: its documents are made here (see `--known-item`).
TASKS.json is a JSON list of {"query": str, "operation": "METHOD /path", "also": [...]} (a hit on
`operation` or on any `also` entry counts). `--half even` keeps the tasks at even indexes (0, 2, ...:
the tuning half), `--half odd` the others (the held-out half); `--misses` prints the tasks whose
operation is not first, with its rank. Each query goes through the
package's own search code (`src/<module>/_runtime/search.py`, loaded from the package, in this
process) over its `search.json`, exactly as the `search_tools` tool runs it (every tool selected).
An operation the package has no tool for counts as a miss (and is reported).
"One search plus one browse" counts a task found when its operation is among the first 10 results,
or when its tool's toolset is the toolset of one of the first 10 results and holds at most 60 tools
(an agent lists that toolset with `search_tools(query="", toolset=...)`).

A set with three phrasings per task (`{"queries": {"user", "agent", "terse"}, ...}`, blind3/) gives
a line per phrasing (`--phrasing` picks one). `--semantic` fuses the optional semantic ranking
(`_runtime/semantic.py`, the package's `semantic.json`; made here for a spec file, which needs
`typed-mcp[semantic]`) as discovery mode does, and prints its model's load time, the RSS it adds and
the median time of a query's embedding.

`--peer SPEC` also runs the same tasks through the peer, FastMCP `from_openapi` on that spec
with its BM25 search transform (bench/fastmcp_search.py, in the benchmark's FastMCP venv), and
prints its figures on the next line.

`--known-item`: for each SOURCE (a generated package's folder, or a spec file whose documents are
made here from the plan, as `typed-mcp generate` makes them, with the search code of the installed
typed_mcp's runtime), every tool's title and the first sentence of its description beyond the title
as queries (those that several tools share left out): the share found first and in the first three,
and the same for the ranking alone (without the exact-match tier). `--write-queries FILE` saves the
queries (by operation); `--queries FILE` reads them, so that another version's documents and search
code can be measured on the same queries.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

LIMIT = 10  # search_tools' default limit; top-5 is read from its first five results
BROWSE = 60  # the most tools a toolset may hold for an agent to read its whole listing
PEER_SCRIPT = Path(__file__).resolve().parent / "fastmcp_search.py"
KINDS = ("title", "sentence")


def load_search(package: Path):
    module = json.loads((package / "typed-mcp.json").read_text())["module"]
    return _module(
        package / "src" / module / "_runtime" / "search.py", module
    ), package / "src" / module / "search.json"


def _module(source: Path, name: str) -> ModuleType:
    """The runtime's search module `source`, imported in a package of its folder, where it finds the
    contracts: a package's own copy, or the generator's runtime itself (`typed_mcp.runtime`)."""
    spec = importlib.util.spec_from_loader(f"_search_of_{name}", None, is_package=True)
    package = importlib.util.module_from_spec(spec)
    package.__path__ = [str(source.parent)]
    sys.modules[spec.name] = package  # dataclasses and typing resolve the module by name
    return importlib.import_module(f"{spec.name}.{source.stem}")


def index_of(search: ModuleType, documents: Path) -> Any:
    """The package's search index over every tool, as discovery mode builds it."""
    loaded = search.load(documents)  # (documents, thesaurus[, toolsets])
    return search.SearchIndex(loaded[0], thesaurus=loaded[1])


def rank_of(task: dict, operations: list[str]) -> int | None:
    """Where the task's operation (or one it also accepts) is among `operations`, from 1; None: absent."""
    accepted = {task["operation"], *task.get("also", [])}
    return next((number for number, operation in enumerate(operations, 1) if operation in accepted), None)


def in_top(tasks: list[dict], ranked: list[list[str]], count: int) -> set[int]:
    """The indexes of the tasks whose operation is among the first `count` of their ranking."""
    return {
        number
        for number, (task, operations) in enumerate(zip(tasks, ranked, strict=True))
        if (rank := rank_of(task, operations)) is not None and rank <= count
    }


def two_searches(found: dict[str, set[int]], count: int) -> str | None:
    """For a set of three phrasings: the tasks found in the top 5 by the user's words or, failing
    that, by the agent's second search in the API's nouns (None: the set has no such two phrasings)."""
    if "user" not in found or "agent" not in found:
        return None
    both = len(found["user"] | found["agent"])
    return f"within two searches (the user's words, then the agent's, top 5): {both}/{count} ({both / count:.0%})"


def summary(label, tasks, ranked, times, tools, args, tool_of, browsed=None) -> str:
    """One line of figures for `ranked` (each task's operations, best first), after the misses asked for."""
    top1 = top5 = 0
    for task, operations in zip(tasks, ranked, strict=True):
        rank = rank_of(task, operations)
        top1 += rank == 1
        top5 += rank is not None and rank <= 5
        missing = task["operation"] not in tool_of
        if args.verbose or missing or args.misses and rank != 1:
            note = "no tool for this operation" if missing else f"rank {rank or '>' + str(LIMIT)}"
            print(f"{note:>14}  {task['query']!r} -> {task['operation']}; top: {', '.join(operations[:3])}")
    count = len(tasks)
    line = (
        f"{label}: {count} tasks over {tools} tools: top-1 {top1}/{count} ({top1 / count:.0%}), "
        f"top-5 {top5}/{count} ({top5 / count:.0%}), median search {statistics.median(times):.2f} ms"
    )
    if browsed is not None:
        line += f", one search plus one browse {browsed}/{count} ({browsed / count:.0%})"
    return line


def browsed(tasks: list[dict], results: list[list[dict]], index: Any, operations: dict[str, str]) -> int | None:
    """How many tasks one search and one toolset listing find (None: the package has no toolsets)."""
    docs = index.docs
    if not docs or "toolset" not in docs[0]:
        return None
    toolset_of = {doc["tool"]: doc["toolset"] for doc in docs}
    sizes = Counter(toolset_of.values())
    found = 0
    for task, hits in zip(tasks, results, strict=True):
        accepted = {task["operation"], *task.get("also", [])}
        targets = {toolset_of[tool] for tool, operation in operations.items() if operation in accepted}
        shown = {hit["toolset"] for hit in hits}
        found += any(operations[hit["name"]] in accepted for hit in hits) or any(
            toolset in shown and sizes[toolset] <= BROWSE for toolset in targets
        )
    return found


def run_peer(spec: Path, tasks: list[dict]) -> dict:
    """The tasks ranked by FastMCP's BM25 search transform (in the benchmark's FastMCP venv)."""
    sys.path.insert(0, str(PEER_SCRIPT.parent))
    import bench_env
    import common  # the venv and version the side-by-side benchmark uses

    version = bench_env.ensure_venv(common.FASTMCP_VENV, "fastmcp", common.FASTMCP_VERSION)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
        json.dump(tasks, handle)
        handle.flush()
        done = subprocess.run(
            [str(common.FASTMCP_PYTHON), str(PEER_SCRIPT), str(spec), handle.name],
            capture_output=True,
            text=True,
            check=True,
        )
    return {**json.loads(done.stdout), "version": version}


def phrasings(tasks: list[dict], chosen: str | None) -> dict[str, list[dict]]:
    """The task lists to measure: the tasks as they are, or, for a set with three phrasings per task
    (`{"queries": {"user", "agent", "terse"}, ...}`, blind3/), one list per phrasing (or the one chosen)."""
    if not tasks or "queries" not in tasks[0]:
        return {"": tasks}
    names = [chosen] if chosen else list(tasks[0]["queries"])
    return {name: [{**task, "query": task["queries"][name]} for task in tasks] for name in names}


def attach_semantic(search: ModuleType, index: Any, folder: Path, made_here: bool, documents: Path) -> float:
    """The optional semantic ranking on `index`, as discovery mode attaches it (vectors of a package
    folder, or made here for a spec file's documents), its model loaded: the seconds the load took."""
    semantic = importlib.import_module(f"{search.__package__}.semantic")
    if made_here:
        from typed_mcp.render.semantic import semantic_files

        for name, text in semantic_files(documents.read_text(encoding="utf-8")).items():
            (folder / name).write_text(text, encoding="utf-8")
    index.semantic = semantic.Semantic(folder, [doc["tool"] for doc in index.docs])
    before = _rss()
    started = time.perf_counter()
    if index.semantic.ready(wait=600) is None:
        raise SystemExit("--semantic: the model did not load (see the log line above)")
    loaded = time.perf_counter() - started
    print(f"  (semantic model loaded in {loaded * 1000:.0f} ms; it added {_rss() - before:.0f} MiB of RSS)")
    return loaded


def _rss() -> float:
    """This process's resident memory now, in MiB (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def tasks_main(args: argparse.Namespace) -> int:
    search, documents, operations, _ = source_documents(args.package, args.ref_root)  # tool -> "METHOD /path"
    tool_of = {operation: tool for tool, operation in operations.items()}
    tasks = json.loads(args.tasks.read_text())
    if args.half is not None:
        tasks = tasks[args.half == "odd" :: 2]
    started = time.perf_counter()
    try:
        index = index_of(search, documents)
        built = time.perf_counter() - started
        if args.semantic:
            attach_semantic(search, index, documents.parent, not args.package.is_dir(), documents)
    finally:
        if not args.package.is_dir():  # documents made here
            shutil.rmtree(documents.parent)

    top5s: dict[str, set[int]] = {}  # phrasing -> the tasks in its top 5
    peer_top5s: dict[str, set[int]] = {}
    for phrasing, asked in phrasings(tasks, args.phrasing).items():
        ranked, times, results = [], [], []
        for task in asked:
            started = time.perf_counter()
            found = index.search(task["query"], LIMIT)
            times.append((time.perf_counter() - started) * 1000)
            results.append(found)
            ranked.append([operations[result["name"]] for result in found])
        label = f"{args.tasks.name}{f' ({args.half} half)' if args.half else ''}{f' [{phrasing}]' if phrasing else ''}"
        browse = browsed(asked, results, index, operations)
        engine = "typed-mcp + semantic" if args.semantic else "typed-mcp"
        print(summary(f"{label}: {engine}", asked, ranked, times, len(index.docs), args, tool_of, browse))
        top5s[phrasing] = in_top(asked, ranked, 5)
        if args.semantic:  # of a search's time, what embedding the query takes
            embedder = index.semantic.ready()
            embedded = []
            for task in asked:
                started = time.perf_counter()
                embedder.embed(task["query"])
                embedded.append((time.perf_counter() - started) * 1000)
            print(f"  (median query embedding {statistics.median(embedded):.2f} ms)")
        if args.peer is not None:
            peer = run_peer(args.peer, asked)
            print(
                summary(
                    f"{label}: FastMCP {peer['version']} BM25SearchTransform",
                    asked,
                    peer["ranked"],
                    peer["ms"],
                    peer["tools"],
                    args,
                    tool_of,
                )
            )
            peer_top5s[phrasing] = in_top(asked, peer["ranked"], 5)
    ours = "typed-mcp + semantic" if args.semantic else "typed-mcp"
    for engine, hits in ((ours, top5s), ("FastMCP BM25SearchTransform", peer_top5s)):
        if (line := two_searches(hits, len(tasks))) is not None:
            print(f"{args.tasks.name}: {engine}: {line}")
    print(f"  (index built in {built * 1000:.0f} ms)")
    return 0


# --- known items ---------------------------------------------------------------------------------------


def source_documents(source: Path, ref_root: Path | None = None) -> tuple[ModuleType, Path, dict[str, str], str]:
    """The search code, `search.json`, tool -> operation and name of a package folder or a spec file
    (whose local `$ref`s may reach `ref_root`)."""
    if source.is_dir():
        search, documents = load_search(source)
        operations = json.loads((source / "typed-mcp.json").read_text())["tools"]
        return search, documents, operations, source.name
    from typed_mcp.plan.build import plan
    from typed_mcp.plan.curation import Curation
    from typed_mcp.render.search import browse_toolsets, search_documents
    from typed_mcp.resources import runtime_dir
    from typed_mcp.spec.load import load
    from typed_mcp.spec.normalize import normalize

    doc = normalize(load(str(source)), ref_root=ref_root)
    api = plan(doc, package_name="known-item", module="known_item", curation=Curation(None, []))
    folder = Path(tempfile.mkdtemp(prefix="known-item-"))
    documents = folder / "search.json"
    documents.write_text(search_documents(api, browse_toolsets(api)), encoding="utf-8")
    search = _module(runtime_dir() / "search.py", "generator")
    return search, documents, {op.tool_name: op.key for op in api.operations}, source.name


def known_queries(search: ModuleType, docs: list[dict], operations: dict[str, str]) -> dict[str, list[list[str]]]:
    """[query, operation] per kind: each tool's title and its description's first sentence beyond the
    title, but for a text that more than one tool says (as its title or its sentence, word for word):
    that query names no one tool."""
    said: dict[str, set[str]] = {}
    for doc in docs:
        for kind in KINDS:
            said.setdefault(" ".join(search.words(doc.get(kind) or "")), set()).add(doc["tool"])
    found: dict[str, list[list[str]]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        seen = set()
        for doc in docs:
            text = doc.get(kind) or ""
            words = " ".join(search.words(text))
            if words and said[words] == {doc["tool"]} and words not in seen:
                seen.add(words)
                found[kind].append([text, operations[doc["tool"]]])
    return found


def known_items(
    search: ModuleType, documents: Path, operations: dict[str, str], queries: dict[str, list[list[str]]] | None
) -> dict[str, Any]:
    """Rank-1 and top-3 shares of the known-item queries, with and without the exact-match tier."""
    index = index_of(search, documents)
    queries = queries or known_queries(search, index.docs, operations)
    figures: dict[str, Any] = {"queries": queries}
    for tier in ("with", "without"):
        if tier == "without":
            if not hasattr(index, "exact"):
                break
            index.exact = {}
        for kind in KINDS:
            first = three = 0
            misses = []
            for query, operation in queries[kind]:
                ranked = [operations[hit["name"]] for hit in index.search(query, 3)]
                first += ranked[:1] == [operation]
                three += operation in ranked
                if ranked[:1] != [operation]:
                    misses.append([query, operation, ranked])
            figures[f"{kind} {tier}"] = {"queries": len(queries[kind]), "rank1": first, "top3": three, "misses": misses}
    return figures


def known_main(args: argparse.Namespace) -> int:
    saved = json.loads(args.queries.read_text()) if args.queries else {}
    report, written = {}, {}
    for source in args.sources:
        search, documents, operations, name = source_documents(source, args.ref_root)
        try:
            figures = known_items(search, documents, operations, saved.get(name))
        finally:
            if not source.is_dir():  # documents made here
                shutil.rmtree(documents.parent)
        written[name] = figures.pop("queries")
        report[name] = figures
        if not args.json:
            parts = []
            for key, found in figures.items():
                count = found["queries"] or 1
                parts.append(
                    f"{key} exact tier: {found['queries']} queries, rank-1 {found['rank1'] / count:.1%},"
                    f" top-3 {found['top3'] / count:.1%}"
                )
            print(f"known-item {name}: " + "; ".join(parts), flush=True)
            if args.misses:
                for found in figures.values():
                    for query, operation, ranked in found["misses"]:
                        print(f"    {query!r} -> {operation}; top: {', '.join(ranked)}")
    if args.write_queries:
        args.write_queries.write_text(json.dumps(written, indent=1, ensure_ascii=False))
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "package", type=Path, nargs="?", help="a generated package's folder (holding typed-mcp.json), or a spec file"
    )
    parser.add_argument("tasks", type=Path, nargs="?", help="JSON list of {query, operation}")
    parser.add_argument("--half", choices=("even", "odd"), help="only the tasks at even (or odd) indexes")
    parser.add_argument("--misses", action="store_true", help="print the tasks whose operation is not first")
    parser.add_argument("--verbose", "-v", action="store_true", help="print each query's rank and top result")
    parser.add_argument(
        "--semantic", action="store_true", help="fuse the optional semantic ranking (needs typed-mcp[semantic])"
    )
    parser.add_argument(
        "--phrasing", choices=("user", "agent", "terse"), help="a set of three phrasings: only this one"
    )
    parser.add_argument("--peer", type=Path, metavar="SPEC", help="also rank the tasks with FastMCP's BM25 search")
    parser.add_argument(
        "--known-item",
        nargs="+",
        type=Path,
        dest="sources",
        metavar="SOURCE",
        help=("known-item search over packages or spec files"),
    )
    parser.add_argument("--json", action="store_true", help="--known-item: print the figures as JSON")
    parser.add_argument("--queries", type=Path, help="--known-item: the queries, from --write-queries")
    parser.add_argument("--write-queries", type=Path, help="--known-item: save the queries here")
    parser.add_argument("--ref-root", type=Path, help="the folder a spec file's local $refs may reach")
    args = parser.parse_args(argv)
    if args.sources:
        return known_main(args)
    if args.package is None or args.tasks is None:
        parser.error("give PACKAGE_DIR and TASKS.json, or --known-item SOURCE...")
    return tasks_main(args)


if __name__ == "__main__":
    sys.exit(main())
