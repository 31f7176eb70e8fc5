"""Issue 3 on every CI run: each small real spec of the shared corpus generates, imports, lists
sound schemas, and passes the fidelity check. The big specs run with `make corpus`."""

from __future__ import annotations

import pytest

from harness import corpus
from support import CORPUS

SMALL = 250_000  # bytes; the larger specs take minutes each with fidelity, see `make corpus`
QUICK = 50_000  # bytes; the small specs above this take half a minute or more each: make test-long runs them


def size_marks(meta: dict[str, str]) -> list[pytest.MarkDecorator]:
    """`long` for a small spec too big for make test's time on 2 cores (make test-long runs it)."""
    return [pytest.mark.long] if int(meta["size_bytes"].split()[0]) > QUICK else []


def small_specs():
    if not CORPUS.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [
        pytest.param(path, meta, id=meta["file"], marks=size_marks(meta))
        for path, meta in corpus.discover(CORPUS)
        if int(meta["size_bytes"].split()[0]) <= SMALL and meta["operations"] != "0"
    ]


@pytest.mark.parametrize(("path", "meta"), small_specs())
def test_small_spec(path, meta, tmp_path):
    row = corpus.run_spec(path, meta, tmp_path, fidelity_sample=200, per_op=3)
    assert row.error is None
    assert row.tools + row.skipped == row.operations == int(meta["operations"])
    assert row.skipped == 0, row.skip_reasons
    assert row.with_output >= int(meta["ops_2xx_json_schema"])  # every 2xx JSON response has an outputSchema
    assert row.schema_problems == []
    assert row.catalog_matches_sdk is True  # published schemas are exactly the SDK's for these functions
    fidelity = row.fidelity
    assert fidelity["not_generatable"] == 0 and fidelity["instances"] >= 2 * row.with_output
    assert fidelity["passed"], fidelity["rejected"]
