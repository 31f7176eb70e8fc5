"""Issue 4 on every CI run: each small corpus spec's tools, called through the strict TypeScript
MCP client against Prism (a mock server built from the same spec, validating every request)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from generator import corpus
from node_tools import prism, run_ts_client
from support import CORPUS, generate
from test_corpus import SMALL
from test_ts_client import synthesize_calls

# Prism's own error documents: it could not produce an answer for that operation.
PRISM_CANNOT_ANSWER = "stoplight.io/prism/errors#NO_COMPLEX_OBJECT_TEXT"


def specs():
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [
        pytest.param(path, id=meta["file"])
        for path, meta in corpus.discover(CORPUS)
        if int(meta["size_bytes"].split()[0]) <= SMALL and meta["operations"] != "0"
    ]


@pytest.mark.parametrize("path", specs())
def test_every_tool_against_prism(path, tmp_path):
    name = "prism-" + path.name.split(".")[0].replace("_", "-")[:30].lower()
    out = tmp_path / name
    generate(path, out, name, "--no-verify")
    module = json.loads((out / "typed-mcp.json").read_text())["module"]
    sys.path.insert(0, str(out / "src"))
    api = importlib.import_module(f"{module}.upstream").api
    env = {"PYTHONPATH": str(out / "src")}
    env.update({var: "prism-credential" for scheme in api.schemes.values() for var in scheme.env})
    with prism(path.resolve()) as base:
        command = [sys.executable, "-m", module, "--base-url", str(base)]
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True)
        run = run_ts_client(command, env, synthesize_calls(listed["tool_list"]), timeout=900)
        base.settle()
        violations = base.violations("request")
    protocol_errors = [(r["name"], r["errorCode"], r["error"]) for r in run["results"] if r["errorCode"] is not None]
    unanswered = [r["name"] for r in run["results"] if r["isError"] and PRISM_CANNOT_ANSWER in (r.get("text") or "")]
    off_spec = [r["name"] for r in run["results"] if r["isError"] and "upstream response does not match" in (r.get("text") or "")]
    # Known gap: `format: email` is not carried into inputSchemas (email fields are plain strings, so
    # outputs can never disagree with a strict client's email check), so a synthesized "abc" may be refused.
    email_format = [r["name"] for r in run["results"] if r["isError"] and 'must match format \\"email\\"' in (r.get("text") or "")]
    other_errors = [(r["name"], (r.get("text") or "")[:300]) for r in run["results"]
                    if r["isError"] and r["name"] not in unanswered + off_spec + email_format]
    ok = sum(1 for r in run["results"] if r["ok"] and not r["isError"])
    print(f"{path.name}: {run['tools']} tools, {ok} ok, {len(unanswered)} Prism cannot answer, "
          f"{len(off_spec)} answered outside the response model, {len(email_format)} email-format refusals, "
          f"{len(violations)} request violations")
    assert protocol_errors == []  # no -32602 / -32600 from the strict client
    assert violations == []  # every request was valid for the spec
    assert other_errors == []
    # Answers outside the response model (e.g. a string where a property-only schema is read as an object,
    # a required property Prism leaves out) are refused by the server with the field named, as they must be.
    assert ok + len(unanswered) + len(off_spec) + len(email_format) == run["tools"] == len(listed["tool_list"])
    assert ok >= 0.7 * run["tools"] or len(unanswered) == run["tools"]
