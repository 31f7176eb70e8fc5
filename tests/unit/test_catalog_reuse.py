"""The keys that let a tool of the last catalog be reused (`typed_mcp/catalog/reuse.py`): a tool's key
changes with every file its listing may read, and with nothing else."""

from __future__ import annotations

import json

import pytest

from typed_mcp.catalog.reuse import Keys, ToolSource

SRC = "src/pkg/"
ABOUT = 'PACKAGE = "pkg"\nSPEC_SHA256 = "{sha}"\nTOOL_COUNT = {count}\nICONS = []\n'


def package() -> tuple[dict[str, str], dict[str, set[tuple[object, ...]]]]:
    """Two tools: `get_a` returns `A`, whose module imports `B`'s; `get_c` returns `C`."""
    files = {
        SRC + "_about.py": ABOUT.format(sha="1", count=2),
        SRC + "_runtime/server.py": "runtime",
        SRC + "search.json": "{}",
        SRC + "tools/__init__.py": "INDEX = {...}",
        SRC + "tools/get_a.py": "tool a",
        SRC + "tools/get_c.py": "tool c",
        SRC + "models/__init__.py": "_MODULE_OF = {...}",
        SRC + "models/a.py": "class A",
        SRC + "models/b.py": "class B",
        SRC + "models/c.py": "class C",
        "README.md": "readme",
    }
    imports = {
        SRC + "tools/get_a.py": {("_runtime", 2, "tool", None), ("models", 2, "A", None), ("typing", 0, "Any", None)},
        SRC + "tools/get_c.py": {("_runtime", 2, "tool", None), ("models", 2, "C", None)},
        SRC + "models/a.py": {("_runtime", 2, "OpenModel", None), ("b", 1, "B", None)},
        SRC + "models/b.py": {("_runtime", 2, "OpenModel", None)},
        SRC + "models/c.py": {("_runtime", 2, "OpenModel", None)},
    }
    return files, imports


MODULES = {"A": "a", "B": "b", "C": "c"}
TOOLS = (ToolSource("get_a", "get_a", None), ToolSource("get_c", "get_c", None))


def keys(files: dict[str, str], imports: dict[str, set[tuple[object, ...]]], budget: int = 100) -> list[str]:
    keyed = Keys(files, imports, "pkg", MODULES, budget)
    return [keyed.of(tool) for tool in TOOLS]


@pytest.mark.parametrize(
    ("path", "changed"),
    [
        ("tools/get_a.py", [True, False]),  # its own module
        ("models/a.py", [True, False]),  # the model it returns
        ("models/b.py", [True, False]),  # a model that model imports
        ("models/c.py", [False, True]),
        ("_runtime/server.py", [True, True]),  # the package's own code: every tool
        ("search.json", [False, False]),  # read by no listing
        ("tools/__init__.py", [False, False]),  # what counts of it is each tool's entry (ToolSource)
        ("models/__init__.py", [False, False]),  # what counts of it is each class's module (MODULES)
    ],
)
def test_a_tools_key_changes_with_what_its_listing_reads(path: str, changed: list[bool]):
    files, imports = package()
    before = keys(files, imports)
    files[SRC + path] += " edited"
    assert [old != new for old, new in zip(before, keys(files, imports), strict=True)] == changed


def test_the_spec_facts_of_about_change_no_key_and_its_other_lines_every_key():
    files, imports = package()
    before = keys(files, imports)
    files[SRC + "_about.py"] = ABOUT.format(sha="2", count=3)
    assert keys(files, imports) == before
    files[SRC + "_about.py"] = ABOUT.format(sha="2", count=3).replace('"pkg"', '"other"')
    assert all(old != new for old, new in zip(before, keys(files, imports), strict=True))
    assert keys(files, imports, budget=50) != keys(files, imports)


@pytest.mark.parametrize(
    "imported",
    [
        ("helpers", 1, "x", None),  # a sibling of tools/
        (None, 2, "models", None),  # `from .. import models`
        ("tools", 2, "INDEX", None),
        ("models", 2, "Unknown", None),  # a name no model module defines
    ],
)
def test_an_import_not_understood_makes_a_tool_depend_on_every_file(imported: tuple[object, ...]):
    files, imports = package()
    imports[SRC + "tools/get_c.py"].add(imported)
    before = keys(files, imports)
    files[SRC + "models/a.py"] += " edited"  # not among get_c's models
    after = keys(files, imports)
    assert before[1] != after[1]
    files[SRC + "tools/get_a.py"] += " edited"  # another tool's module
    assert keys(files, imports)[1] != after[1]


def test_a_module_without_recorded_imports_depends_on_every_file():
    files, imports = package()
    del imports[SRC + "models/b.py"]
    before = keys(files, imports)
    files[SRC + "models/c.py"] += " edited"
    assert keys(files, imports) != before and keys(files, imports)[0] != before[0]


def test_an_index_naming_another_file_or_holding_no_keys_reuses_nothing(tmp_path, monkeypatch, capsys):
    """The index of the last catalog is a cache entry anyone who can write the cache folder can
    plant: one naming a file that is no catalog entry is not followed, whatever its digest."""
    from typed_mcp import cache
    from typed_mcp.catalog import reuse
    from typed_mcp.catalog.pack import Packer, pack

    monkeypatch.setenv("TYPED_MCP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TYPED_MCP_NO_CACHE", raising=False)
    secret = tmp_path / "secret.json"
    secret.write_text(pack([{"name": "get_a", "inputSchema": {"type": "object"}}]))
    cache.put(secret.name, secret.read_text())  # even with a digest recorded for it
    entry = cache.key("catalog", "x")
    cache.put(entry, pack([{"name": "get_a", "inputSchema": {"type": "object"}}]))
    for catalog, keys in (
        (f"../{tmp_path.name}/secret.json", {"get_a": "k"}),
        ("secret.json", {"get_a": "k"}),
        (entry, []),
    ):
        cache.put(reuse._index_entry("pkg"), json.dumps({"catalog": catalog, "keys": keys}))
        assert reuse.previous("pkg", {"get_a": "k"}, Packer()).tools == {}
        assert "not an index of a catalog" in capsys.readouterr().err
    reuse.remember("pkg", entry, {"get_a": "k"})
    assert list(reuse.previous("pkg", {"get_a": "k"}, Packer()).tools) == ["get_a"]
    assert reuse.previous("pkg", {"get_a": "changed"}, Packer()).tools == {}
