"""Score an agent trial's answers against its task sets: a request is found when the chosen tool is
the task's operation (or one of its `also`), first when the first call's results showed it. Tool
names map to operations through the typed-mcp package's typed-mcp.json and, for the peer, through
FastMCP's `mcp_component_fn` hook (peer_names.json, written by the peer's venv).

    score.py [TRIAL]    TRIAL: a folder with answers-*.tsv and, but for this folder's own trial (the
                        blind3 sets of Stripe and Airflow), a trial.json {"set": ..., "apis": [...]}
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("TRIAL_WORK", "/work/scratch/trial"))


def tasks(trial: Path) -> dict[str, list[dict]]:
    described = trial / "trial.json"
    setup = {"set": "blind3", "apis": ["stripe", "airflow"]}  # this folder's own trial
    if described.exists():
        setup = json.loads(described.read_text())
    return {
        api: json.loads((HERE.parent / "search_tasks" / setup["set"] / f"{api}.json").read_text())
        for api in setup["apis"]
    }


def operations(apis: list[str]) -> dict[str, dict[str, dict[str, str]]]:
    # typed-mcp.json's tools: tool -> the operation's key, which keeps a path's `#fragment` (Box's
    # `PUT /files/{file_id}#add_shared_link`) where search.json's operation shows the request alone.
    typed = {api: json.loads((WORK / f"{api}-mcp/typed-mcp.json").read_text())["tools"] for api in apis}
    return {"typed-mcp": typed, "fastmcp": json.loads((WORK / "peer_names.json").read_text())}


def main() -> None:
    trial = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    asked = tasks(trial)
    for system, names in operations(list(asked)).items():
        per: dict[str, list[int]] = {}
        for line in (trial / f"answers-{system}.tsv").read_text().splitlines():
            tid, tool, _calls, first_seen = line.split("\t")[:4]
            api, index = tid.split("-")
            task = asked[api][int(index) - 1]
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
