"""Issue 3 on every CI run: each small real spec of the shared corpus generates, imports, lists
sound schemas, and passes the fidelity check. The big specs run with `make corpus`."""

from __future__ import annotations

import pytest

from harness import corpus
from support import CORPUS

SMALL = 250_000  # bytes; the larger specs take minutes each with fidelity, see `make corpus`
# make test runs one small spec of each kind: Swagger 2.0 split over YAML files joined by relative
# `$ref`s, and OpenAPI 3.0 with `allOf`. The others (the same kinds again, or over 50 KB: half a minute
# or more each on 2 cores) run in make test-long.
CI_SAMPLE = frozenset({"oai__v2.0-petstore-separate/spec/swagger.yaml", "oai__v3.0-petstore-expanded.yaml"})


def size_marks(meta: dict[str, str]) -> list[pytest.MarkDecorator]:
    """`long` for a small spec outside make test's sample (make test-long runs it)."""
    return [] if meta["file"] in CI_SAMPLE else [pytest.mark.long]


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
