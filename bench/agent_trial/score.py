"""Score the agent trial's answers against the blind3 task sets: a request is found when the chosen
tool is the task's operation (or one of its `also`), first when the first call's results showed it.
Tool names map to operations through the typed-mcp package's search.json and, for the peer, through
FastMCP's `mcp_component_fn` hook (peer_names.json, written by the peer's venv)."""

import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("TRIAL_WORK", "/work/scratch/trial"))
TASKS = {
    api: json.loads((HERE.parent / "search_tasks" / "blind3" / f"{api}.json").read_text())
    for api in ("stripe", "airflow")
}


def operations() -> dict[str, dict[str, dict[str, str]]]:
    typed = {
        api: {
            t["tool"]: t["operation"]
            for t in json.loads((WORK / f"{api}-mcp/src/{api}_mcp/search.json").read_text())["tools"]
        }
        for api in TASKS
    }
    return {"typed-mcp": typed, "fastmcp": json.loads((WORK / "peer_names.json").read_text())}


def main() -> None:
    for system, names in operations().items():
        per: dict[str, list[int]] = {}
        for line in (HERE / f"answers-{system}.tsv").read_text().splitlines():
            tid, tool, _calls, first_seen = line.split("\t")[:4]
            api, index = tid.split("-")
            task = TASKS[api][int(index) - 1]
            op = names[api].get(tool)
            found = op == task["operation"] or op in task.get("also", [])
            counts = per.setdefault(api, [0, 0, 0])
            counts[0] += found and first_seen.strip() == "1"
            counts[1] += found
            counts[2] += 1
        for api, (first, within, total) in per.items():
            print(f"{system:10} {api:8} first search {first}/{total}, within three calls {within}/{total}")


if __name__ == "__main__":
    main()
