"""A big API's models are generated in two parts at once and merged (generator/typed_mcp/models/parts.py).
The merge must keep what each part meant: the code generator numbers clashing inline names in the
order it meets them, so both parts may call different models `Owner1`."""

from __future__ import annotations

import ast
import json
import shutil

import pytest

from support import CORPUS
from typed_mcp import pipeline
from typed_mcp.models import build as models
from typed_mcp.models import parts as model_parts
from typed_mcp.models.parts import MergeError, merge
from typed_mcp.options import GenerateOptions

HEAD = "from pydantic import ConfigDict, Field\nfrom typed_mcp_runtime_base import OpenModel\n"

FIRST = (
    HEAD
    + """

class Owner1(OpenModel):
    login: str


class Wrapper(OpenModel):
    inner: Owner1 | None = Field(None, description='Owner1')


class Repo(OpenModel):
    owner: Owner1


class Shared(OpenModel):
    name: str
"""
)

# Here `Owner1` is another model; `Wrapper` (the same text as the first part's) uses it, and so means
# something else too; `Issue` is this part's own schema; `Unused1` only served this part's copy of Repo.
SECOND = (
    "from pydantic import Field, RootModel\nfrom typed_mcp_runtime_base import OpenModel\n"
    + '''

class Owner1(OpenModel):
    """Owner1"""
    id: int
    kind: Literal['Owner1'] = 'Owner1'


class Wrapper(OpenModel):
    inner: Owner1 | None = Field(None, description='Owner1')


class Unused1(OpenModel):
    x: int


class Repo(OpenModel):
    owner: Unused1


class Shared(OpenModel):
    name: str


class Issue(OpenModel):
    author: Owner1
    wrapped: list['Wrapper']
    shared: Shared
    repo: Repo


Issue.model_rebuild()
'''
)


def classes(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {node.name: ast.unparse(node) for node in tree.body if isinstance(node, ast.ClassDef)}


def test_a_name_two_parts_give_to_different_models_is_renamed_with_every_reference_to_it():
    merged = merge(FIRST, SECOND, fixed={"Repo", "Shared", "Issue"})
    found = classes(merged)
    owner = next(name for name in found if name.startswith("Owner1") and name != "Owner1")
    wrapper = next(name for name in found if name.startswith("Wrapper") and name != "Wrapper")
    assert (
        found["Owner1"] == classes(FIRST)["Owner1"] and found["Wrapper"] == classes(FIRST)["Wrapper"]
    )  # the first part's keep their names
    assert wrapper != "Wrapper" and f"inner: {owner} | None" in found[wrapper]  # uses the renamed one, so renamed too
    assert "description='Owner1'" in found[wrapper]  # data is not a reference
    assert (
        f"class {owner}(OpenModel):" in merged
        and "Literal['Owner1'] = 'Owner1'" in found[owner]
        and '"""Owner1"""' in merged
    )
    assert f"author: {owner}" in found["Issue"] and f"list['{wrapper}']" in found["Issue"]  # the forward reference too
    assert "shared: Shared" in found["Issue"] and "repo: Repo" in found["Issue"]  # schemas keep their names
    assert (
        found["Repo"] == classes(FIRST)["Repo"] and "Unused1" not in found
    )  # the first part's Repo, without its inline copy
    assert list(found).count("Shared") == 1
    assert merged.count("Issue.model_rebuild()") == 1
    header = merged.split("\n\n")[0]
    assert "from pydantic import ConfigDict, Field, RootModel" in header  # one import per module
    assert header.count("from typed_mcp_runtime_base import OpenModel") == 1
    compile(merged, "models.py", "exec")


def test_merging_is_deterministic():
    assert merge(FIRST, SECOND, fixed={"Repo", "Shared", "Issue"}) == merge(
        FIRST, SECOND, fixed={"Repo", "Shared", "Issue"}
    )


def test_a_class_named_like_an_import_of_the_other_part_cannot_be_merged():
    second = "from typed_mcp_runtime_base import OpenModel\n\n\nclass ConfigDict(OpenModel):\n    x: int\n"
    with pytest.raises(MergeError):
        merge(FIRST, second, fixed={"ConfigDict"})


def test_halves_give_the_first_part_the_bigger_share():
    keys = [f"k{i}" for i in range(100)]
    first, second = model_parts.halves(keys, len)
    assert first + second == keys and len(first) >= model_parts.HEAD_START * len(second) > len(first) - 2


def corpus_spec(name: str):
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"no corpus spec {path}")
    return path


def unpacked(catalog_file) -> dict[str, dict]:
    data = json.loads(catalog_file.read_text())
    tools = {}
    for tool in data["tools"]:
        for key in ("inputSchema", "outputSchema"):
            schema = tool.get(key)
            if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
                tool[key] = {**schema, "$defs": {n: data["shared"][i] for n, i in schema["$defs"].items()}}
        tools[tool["name"]] = tool
    return tools


def resolved(schema, depth=0, defs=None):
    """`schema` with `$defs` references followed (to a depth) and titles dropped: what it accepts,
    whatever its models are called."""
    defs = schema.get("$defs", {}) if defs is None and isinstance(schema, dict) else defs
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and depth < 8:
            return resolved(defs[ref[len("#/$defs/") :]], depth + 1, defs)
        return {k: resolved(v, depth, defs) for k, v in schema.items() if k not in ("$defs", "title")}
    if isinstance(schema, list):
        return [resolved(v, depth, defs) for v in schema]
    return schema


@pytest.mark.parametrize("name", ["apisguru__zoom.us.json"])
@pytest.mark.long  # half a minute on 2 cores; the renaming itself is tested above, in make test
def test_models_generated_in_parts_publish_the_same_tools(name, tmp_path, monkeypatch):
    """Zoom's parts name hundreds of inline models alike (`Settings1`...): generated in two parts, every
    tool's schemas accept exactly what the one-run package's accept."""
    spec = corpus_spec(name)
    monkeypatch.setenv("TYPED_MCP_NO_CACHE", "1")
    merges = []
    real_merge = model_parts.merge
    monkeypatch.setattr(model_parts, "merge", lambda *a: merges.append(1) or real_merge(*a))
    monkeypatch.setattr(model_parts, "SPLIT_MIN_SCHEMAS", 1)
    split = pipeline.generate(GenerateOptions(str(spec), tmp_path / "split"))
    monkeypatch.setattr(model_parts, "SPLIT_MIN_SCHEMAS", 10**9)
    whole = pipeline.generate(GenerateOptions(str(spec), tmp_path / "whole"))
    assert merges == [1]
    module = split.plan.module
    a, b = (unpacked(tmp_path / out / "src" / module / "catalog.json") for out in ("split", "whole"))
    assert a.keys() == b.keys() and len(a) == len(whole.plan.operations)
    renamed = 0
    for tool in a:
        if a[tool] != b[tool]:
            renamed += 1
            for key in ("inputSchema", "outputSchema"):
                assert resolved(a[tool].get(key)) == resolved(b[tool].get(key)), (tool, key)
    assert renamed  # the parts did clash: the renaming was exercised
    shutil.rmtree(tmp_path)


def petstore_plan():
    from typed_mcp.plan.build import plan
    from typed_mcp.spec.load import load
    from typed_mcp.spec.normalize import normalize

    doc = normalize(load(str(corpus_spec("oai__v3.0-petstore-expanded.yaml"))))
    return doc, plan(doc, package_name="petstore-mcp", module="petstore_mcp", spec_url=None)


@pytest.mark.slow  # the parts are generated in helper processes
def test_parts_that_cannot_be_merged_are_generated_in_one_run(monkeypatch):
    monkeypatch.setenv("TYPED_MCP_NO_CACHE", "1")
    doc, api = petstore_plan()
    whole = models.build_models(doc, api, split=False)

    def refuse(*_):
        raise MergeError("for the test")

    monkeypatch.setattr(model_parts, "merge", refuse)
    freed = []
    assert models.build_models(doc, api, split=True, cores_free=lambda: freed.append(1)).source == whole.source
    assert freed  # the catalog workers may start (called again before the one run: starting is idempotent)


@pytest.mark.slow  # the parts are generated in helper processes
def test_a_helper_process_that_dies_is_a_clear_error(monkeypatch):
    from typed_mcp.errors import SpecError

    monkeypatch.setenv("TYPED_MCP_NO_CACHE", "1")
    monkeypatch.setattr(model_parts, "WORKER", "typed_mcp.no_such_worker")
    doc, api = petstore_plan()
    with pytest.raises(
        SpecError, match="the model generator process failed: .*No module named typed_mcp.no_such_worker"
    ):
        models.build_models(doc, api, split=True)
