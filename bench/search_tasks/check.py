"""Check the search task sets against their OpenAPI specs.

Usage: python3 bench/search_tasks/check.py [CORPUS_DIR]   (default /work/shared/corpus)

For each task file: every "operation" and every "also" entry must be "METHOD /path"
with an upper-case method that exists under that exact path key in the spec; queries
must be unique (case-insensitive); "also" must not repeat the operation.  Also prints
a word-overlap score between each query and its operation's summary/operationId, so
queries that merely paraphrase the summary can be spotted and reworded.
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/corpus")
SETS = {"github.json": "github__api.github.com.json", "cloudflare.json": "cloudflare__openapi.json"}
METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "trace"}
STOP = set("a an the to of for on in and or my our is are be by with from as at it this that".split())


def words(s):
    return {w for w in re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", s).lower()) if w not in STOP}


def main():
    bad = 0
    for name, spec_name in SETS.items():
        spec = json.loads((CORPUS / spec_name).read_text())
        ops = {}
        for path, item in spec["paths"].items():
            for m, op in item.items():
                if m in METHODS:
                    ops[f"{m.upper()} {path}"] = op
        tasks = json.loads((HERE / name).read_text())
        seen = set()
        targets = set()
        for i, t in enumerate(tasks):
            q, op = t.get("query"), t.get("operation")
            if not isinstance(q, str) or not q.strip() or set(t) - {"query", "operation", "also"}:
                print(f"{name}[{i}]: malformed task {t}")
                bad += 1
                continue
            if q.lower() in seen:
                print(f"{name}[{i}]: duplicate query {q!r}")
                bad += 1
            seen.add(q.lower())
            for o in [op, *t.get("also", [])]:
                if o not in ops:
                    print(f"{name}[{i}]: operation not in spec: {o!r}")
                    bad += 1
            if op in t.get("also", []):
                print(f"{name}[{i}]: 'also' repeats the operation")
                bad += 1
            targets.add(op)
            if op in ops:
                ref = words(ops[op].get("summary", "")) | words(ops[op].get("operationId", ""))
                qw = words(q)
                overlap = len(qw & ref) / max(1, len(qw))
                if overlap >= 0.5:
                    print(f"  note {name}[{i}] overlap {overlap:.2f}: {q!r} ~ {ops[op].get('summary')!r}")
        print(f"{name}: {len(tasks)} tasks, {len(targets)} distinct target operations, spec has {len(ops)} operations")
    print("OK" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
