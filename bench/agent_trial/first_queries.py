"""Write the agents' own first queries of an agent trial as search task sets: for each request the
typed-mcp helper answered, its first search (not within a toolset), with the task's operation.

    first_queries.py TRIAL OUT     TRIAL: a trial folder (score.py's); OUT: a folder for API.json

The calls of calls-typed-mcp.jsonl are cut into requests by the answers' CALLS_USED, in order, after
the first listings of the servers' tools (which the brief makes every helper do first); a listing of
all the toolsets is not counted either."""

import json
import sys
from pathlib import Path

from score import tasks


def main() -> None:
    trial, out = Path(sys.argv[1]), Path(sys.argv[2])
    asked = tasks(trial)
    calls = [json.loads(line) for line in (trial / "calls-typed-mcp.jsonl").read_text().splitlines()]
    start = max(n for n, call in enumerate(calls[:8]) if call["tool"] is None) + 1
    # A listing of every toolset is a listing too (blind5's helper made one, outside its count).
    calls = [
        call
        for call in calls[start:]
        if call["tool"] is not None and (call["tool"], call["args"]) != ("list_toolsets", {})
    ]
    found: dict[str, list[dict]] = {}
    at = 0
    for line in (trial / "answers-typed-mcp.tsv").read_text().splitlines():
        tid, _tool, used = line.split("\t")[:3]
        api, index = tid.split("-")
        request, at = calls[at : at + int(used)], at + int(used)
        assert all(call["api"] == api for call in request), f"{tid}: the calls do not line up"
        query = next(
            (c["args"]["query"] for c in request if c["tool"] == "search_tools" and not c["args"].get("toolset")), None
        )
        if query:
            task = asked[api][int(index) - 1]
            found.setdefault(api, []).append(
                {"query": query, "operation": task["operation"], **({"also": task["also"]} if "also" in task else {})}
            )
    out.mkdir(parents=True, exist_ok=True)
    for api, listed in found.items():
        (out / f"{api}.json").write_text(json.dumps(listed, indent=1) + "\n")
        print(f"{api}: {len(listed)} queries")


if __name__ == "__main__":
    main()
