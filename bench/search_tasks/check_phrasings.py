"""Check task sets of three phrasings against their specs: python3 check_phrasings.py SET API=SPEC...

SET: a folder of API.json task sets ({"queries": {"user", "agent", "terse"}, "operation", "also"}),
each API given with its spec (`blind4/README.md` and `blind5/README.md` say which). Errors (exit
status 1): an operation or `also` entry that is not in its spec under that exact method and path key,
`also` repeating the operation, two tasks of a file sharing a target, a query (any phrasing) used
twice across the files, a terse form that is not 2-4 words, a user or agent phrasing holding the
operation's summary. Printed: each file's largest share of a user phrasing's words found in its
operation's summary and operationId (the writer reworded any of 0.5 or more).
"""

import json
import re
import sys
from pathlib import Path

METHODS = ("get", "put", "post", "patch", "delete")
STOP = set(
    """a an the and or but if then else of to in on at by for with from into onto over under up down out off
    about as is are was were be been being do does did done doing have has had having i me my mine we us our
    ours you your yours he him his she her it its they them their this that these those what which who whom
    whose when where why how all any both each every few more most other some such no nor not only own same
    so than too very can could will would should shall may might must just now also there here let's let
    it's i'm i'd we've we're don't isn't can't shouldn't""".split()
)


def words(text: str) -> list[str]:
    return [word for word in re.findall(r"[a-z0-9][a-z0-9'@./-]*", text.lower()) if word not in STOP]


def named(summary: str | None, operation_id: str | None) -> set[str]:
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", operation_id or "")
    return set(re.findall(r"[a-z0-9]+", f"{summary or ''} {split}".lower()))


def main() -> int:
    folder = Path(sys.argv[1])
    problems: list[str] = []
    queries: dict[str, str] = {}
    for name, _, file in (pair.partition("=") for pair in sys.argv[2:]):
        spec = json.loads(Path(file).read_text())
        count = sum(1 for item in spec["paths"].values() for method in item if method in METHODS)
        tasks = json.loads((folder / f"{name}.json").read_text())

        def operation(key: str, spec: dict = spec) -> dict | None:
            method, _, path = key.partition(" ")
            item = spec["paths"].get(path, {})
            return item.get(method.lower()) if method in {m.upper() for m in METHODS} else None

        targets = [task["operation"] for task in tasks]
        if len(set(targets)) != len(targets):
            problems.append(f"{name}: two tasks share a target")
        largest = 0.0
        for task in tasks:
            found = operation(task["operation"])
            if found is None:
                problems.append(f"{name}: {task['operation']} is not in the spec")
                continue
            for also in task.get("also", []):
                if operation(also) is None or also == task["operation"]:
                    problems.append(f"{name}: bad also {also}")
            for phrasing, query in task["queries"].items():
                key = query.strip().lower()
                if key in queries:
                    problems.append(f"{name}: {query!r} also in {queries[key]}")
                queries[key] = name
                summary = (found.get("summary") or "").strip().rstrip(".").lower()
                if phrasing in ("user", "agent") and summary and summary in key:
                    problems.append(f"{name}: the {phrasing} phrasing holds the summary of {task['operation']}")
            if not 2 <= len(task["queries"]["terse"].split()) <= 4:
                problems.append(f"{name}: terse {task['queries']['terse']!r} is not 2-4 words")
            said = words(task["queries"]["user"])
            held = named(found.get("summary"), found.get("operationId"))
            share = sum(word.strip("'.-/") in held for word in said) / max(1, len(said))
            largest = max(largest, share)
        print(f"{name}.json: {Path(file).name} ({count} operations), {len(tasks)} tasks, largest overlap {largest:.2f}")
    print(f"{len(queries)} queries; problems: {problems or 'none'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
