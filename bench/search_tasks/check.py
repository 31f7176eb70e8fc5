"""Check the search task sets against their OpenAPI specs.

Usage: python3 bench/search_tasks/check.py [CORPUS_DIR]   (default /work/shared/corpus)

For each task file (the tuning sets here, and those of blind/ and blind2/): every "operation"
and every "also" entry must be "METHOD /path" with an upper-case method that exists under that
exact path key in the spec; queries must be unique (case-insensitive); "also" must not repeat
the operation or itself; every target operation is distinct within a file.  Also prints the
word overlap between a query and its operation's summary/operationId when it is >= 0.5, so
queries that merely paraphrase the summary can be spotted and reworded.  A YAML spec needs PyYAML.
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/corpus")
SETS = {
    "github.json": "github__api.github.com.json",
    "cloudflare.json": "cloudflare__openapi.json",
    "blind/github.json": "github__api.github.com.json",
    "blind/gitlab.json": "apisguru__gitlab.com.json",
    "blind/zoom.json": "apisguru__zoom.us.json",
    "blind2/github.json": "github__api.github.com.json",
    "blind2/box.json": "box__openapi.json",
    "blind2/openai.json": "openai__openapi.yaml",
}
METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "trace"}
STOP = set("a an the to of for on in and or my our is are be by with from as at it this that".split())


def words(s):
    return {w for w in re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", s).lower()) if w not in STOP}


def load_spec(path):
    if path.suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(path.read_text())
    return json.loads(path.read_text())


def spec_operations(spec):
    return {f"{m.upper()} {path}": op for path, item in spec["paths"].items() for m, op in item.items() if m in METHODS}


def check(name, ops, tasks):
    """The problems of one task file (printed), and its overlap notes."""
    bad, seen, targets, notes = 0, set(), set(), 0
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
    return bad


def main():
    specs = {}
    bad = 0
    for name, spec_name in SETS.items():
        if spec_name not in specs:
            specs[spec_name] = spec_operations(load_spec(CORPUS / spec_name))
        bad += check(name, specs[spec_name], json.loads((HERE / name).read_text()))
    print("OK" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
