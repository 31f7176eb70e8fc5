"""Check the second batch of blind search task sets against their OpenAPI specs.

Usage: python3 bench/search_tasks/blind2/check.py [CORPUS_DIR]   (default /work/shared/corpus)

Same checks as ../blind/check.py (reusing ../check.py's word splitting and method list),
for the three files here: every "operation" and "also" entry is "METHOD /path" with an
upper-case method that exists under that exact path key in the spec; queries are unique
(case-insensitive); "also" does not repeat the operation or itself; every target operation
is distinct within a file.  Prints the word overlap between each query and its operation's
summary/operationId when it is >= 0.5, so paraphrases can be reworded.

The OpenAI spec is YAML, so this needs PyYAML.
"""

import json
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from check import METHODS, words  # noqa: E402  (the parent checker's helpers)

CORPUS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/corpus")
SETS = {
    "github.json": "github__api.github.com.json",
    "box.json": "box__openapi.json",
    "openai.json": "openai__openapi.yaml",
}


def load_spec(path):
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    return json.loads(text)


def spec_operations(spec):
    ops = {}
    for path, item in spec["paths"].items():
        for m, op in item.items():
            if m in METHODS:
                ops[f"{m.upper()} {path}"] = op
    return ops


def main():
    bad = 0
    for name, spec_name in SETS.items():
        ops = spec_operations(load_spec(CORPUS / spec_name))
        tasks = json.loads((HERE / name).read_text())
        seen, targets, notes = set(), set(), 0
        for i, t in enumerate(tasks):
            q, op = t.get("query"), t.get("operation")
            also = t.get("also", [])
            if (
                not isinstance(q, str)
                or not q.strip()
                or not isinstance(op, str)
                or not isinstance(also, list)
                or set(t) - {"query", "operation", "also"}
            ):
                print(f"{name}[{i}]: malformed task {t}")
                bad += 1
                continue
            if q.lower() in seen:
                print(f"{name}[{i}]: duplicate query {q!r}")
                bad += 1
            seen.add(q.lower())
            for o in [op, *also]:
                if o not in ops:
                    print(f"{name}[{i}]: operation not in spec: {o!r}")
                    bad += 1
            if op in also or len(set(also)) != len(also):
                print(f"{name}[{i}]: 'also' repeats the operation or itself")
                bad += 1
            if op in targets:
                print(f"{name}[{i}]: target operation used twice: {op!r}")
                bad += 1
            targets.add(op)
            if op in ops:
                summary = " ".join(str(ops[op].get("summary", "")).split())
                ref = words(summary) | words(ops[op].get("operationId", ""))
                qw = words(q)
                overlap = len(qw & ref) / max(1, len(qw))
                if overlap >= 0.5:
                    notes += 1
                    print(f"  note {name}[{i}] overlap {overlap:.2f}: {q!r} ~ {summary[:100]!r}")
        print(
            f"{name}: {len(tasks)} tasks, {len(targets)} distinct target operations, "
            f"{notes} overlap note(s), spec has {len(ops)} operations"
        )
    print("OK" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
