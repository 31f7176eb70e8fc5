"""Issue 4 on every CI run: each small corpus spec's tools, called through the strict TypeScript
MCP client against Prism (a mock server built from the same spec, validating every request)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from generator import corpus
from generator.node_tools import strict_run_against_prism
from support import CORPUS, generate
from test_corpus import SMALL


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
    credentials = {var: "prism-credential" for scheme in api.schemes.values() for var in scheme.env}
    run = strict_run_against_prism(path, out / "src", module, credentials, timeout=900)
    print(f"{path.name}: {run['tools']} tools, {run['ok']} ok, {len(run['prism_cannot_answer'])} Prism cannot answer, "
          f"{len(run['off_spec'])} answered outside the response model, {len(run['email_format'])} email-format refusals, "
          f"{len(run['request_violations'])} request violations")
    assert run["schema_failures"] == []  # the strict client's AJV compiles every inputSchema and outputSchema
    assert run["schemas_compiled"] == run["listed"] + run["outputs"]
    assert run["protocol_errors"] == [] and run["raised"] == []  # no -32602 / -32600 from the strict client
    assert run["request_violations"] == []  # every request was valid for the spec
    # The MCP Python SDK's Client, given the same calls, refuses nothing and sees the same outcomes.
    assert run["python_refused"] == [] and run["python_disagrees"] == []
    # Known gap: `format: email` is not carried into inputSchemas (email fields are plain strings, so
    # outputs can never disagree with a strict client's email check), so a synthesized "abc" may be refused.
    assert run["other_errors"] == []
    # Answers outside the response model (e.g. a string where a property-only schema is read as an object,
    # a required property Prism leaves out) are refused by the server with the field named, as they must be.
    explained = sum(len(run[k]) for k in ("prism_cannot_answer", "off_spec", "email_format", "transport_failures"))
    assert run["ok"] + explained == run["tools"] == run["listed"]
    assert run["ok"] >= 0.7 * run["tools"] or len(run["prism_cannot_answer"]) == run["tools"]
