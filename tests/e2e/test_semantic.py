"""Discovery mode's optional semantic ranking (`[search] semantic = true`, `_runtime/semantic.py`): a
package generated with it ships its tools' vectors and finds a tool by meaning where no word is shared,
through a real server; one generated without it, or whose model does not load, searches by words alone."""

from __future__ import annotations

import importlib
import json
import logging
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from support import generate, package_stdio
from typed_mcp.render.semantic import semantic_files

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

# A few tools of distinct kinds; the request below shares no word with the forecast's name, title,
# path, intent words or description (nor with their synonyms), so the word index cannot find it.
OPERATIONS = {
    ("/forecast/{city}", "get"): "Get the weather forecast",
    ("/invoices", "get"): "List invoices",
    ("/invoices", "post"): "Create an invoice",
    ("/users/{user}", "delete"): "Delete a user",
    ("/orders", "post"): "Place an order",
    ("/orders/{order}", "get"): "Get an order",
}
BY_MEANING = "will I need an umbrella in Oslo tomorrow"


def spec() -> dict[str, Any]:
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    paths: dict[str, Any] = {}
    for (path, method), summary in OPERATIONS.items():
        parameters = [
            {"name": part[1:-1], "in": "path", "required": True, "schema": {"type": "string"}}
            for part in path.split("/")
            if part.startswith("{")
        ]
        paths.setdefault(path, {})[method] = {"summary": summary, "responses": ok, "parameters": parameters}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Shop", "version": "1.0.0"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": paths,
    }


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("semantic")
    (root / "typed-mcp.toml").write_text("[search]\nsemantic = true\n")
    made = {"plain": root / "plain" / "shop-mcp", "semantic": root / "semantic" / "shop-mcp"}
    for package in made.values():
        package.parent.mkdir()
    generate(spec(), made["plain"], "shop-mcp", "--no-verify")
    generate(spec(), made["semantic"], "shop-mcp", "--no-verify", "--config", str(root / "typed-mcp.toml"))
    return made


async def search(package: Path, query: str) -> list[str]:
    async with Client(package_stdio(package, "shop_mcp", "--discovery")) as client:
        result = await client.call_tool("search_tools", {"query": query})
    assert not result.is_error, result.content[0].text
    return [hit["operation"] for hit in result.structured_content["tools"]]


def test_only_the_semantic_package_ships_vectors_and_the_extra(packages):
    src = {name: package / "src" / "shop_mcp" for name, package in packages.items()}
    for name in ("semantic.json", "tokenizer.json", "_runtime/semantic.py"):
        assert (src["semantic"] / name).is_file() and not (src["plain"] / name).exists()
    assert "semantic = [" in (packages["semantic"] / "pyproject.toml").read_text()
    assert "optional-dependencies" not in (packages["plain"] / "pyproject.toml").read_text()
    # The search documents are the same bytes either way; the vectors, made again, too.
    assert (src["semantic"] / "search.json").read_bytes() == (src["plain"] / "search.json").read_bytes()
    again = semantic_files((src["semantic"] / "search.json").read_text(encoding="utf-8"))
    assert again["semantic.json"] == (src["semantic"] / "semantic.json").read_text(encoding="utf-8")
    manifest = json.loads((packages["semantic"] / "typed-mcp.json").read_text())
    assert any(entry["rule"] == "config search.semantic" for entry in manifest["curation"])


async def test_a_request_sharing_no_word_with_its_tool_is_found_by_meaning(packages):
    assert "GET /forecast/{city}" not in await search(packages["plain"], BY_MEANING)
    assert (await search(packages["semantic"], BY_MEANING))[0] == "GET /forecast/{city}"
    # An exact title still comes first, whatever the meaning ranks.
    assert (await search(packages["semantic"], "Place an order"))[0] == "POST /orders"


def test_a_model_that_does_not_load_leaves_the_search_by_words(packages, tmp_path, caplog):
    broken = tmp_path / "shop-mcp"
    shutil.copytree(packages["semantic"], broken)
    (broken / "src" / "shop_mcp" / "tokenizer.json").write_text("{}")  # not the model's tokenizer
    sys.path.insert(0, str(broken / "src"))
    try:
        search_module = importlib.import_module("shop_mcp._runtime.search")
        discovery = importlib.import_module("shop_mcp._runtime.discovery")
        loaded = search_module.load(broken / "src" / "shop_mcp" / "search.json")
        index = search_module.SearchIndex(loaded.tools, thesaurus=loaded.thesaurus)
        lexical = index.search(BY_MEANING)
        index.semantic = discovery._semantic(broken / "src" / "shop_mcp", [doc["tool"] for doc in index.docs])
        with caplog.at_level(logging.WARNING):
            assert index.search(BY_MEANING) == lexical
            assert index.search("umbrella") == index.search("umbrella")
    finally:
        sys.path.remove(str(broken / "src"))
        for name in [name for name in sys.modules if name == "shop_mcp" or name.startswith("shop_mcp.")]:
            del sys.modules[name]
    logged = [record.getMessage() for record in caplog.records if "semantic search off" in record.getMessage()]
    assert len(logged) == 1 and "tokenizer.json" in logged[0], logged


def test_searches_go_by_words_while_the_model_loads(packages, monkeypatch):
    """The first search waits for the model a bounded time, then every search goes by words until the
    model is there (a load held open here stands for a slow disk)."""
    from typed_mcp.runtime import search as search_module
    from typed_mcp.runtime import semantic

    release = threading.Event()

    class Slow(semantic.Embedder):
        def __init__(self, tokenizer: Path) -> None:
            release.wait(60)  # a deadline about hangs only
            super().__init__(tokenizer)

    src = packages["semantic"] / "src" / "shop_mcp"
    loaded = search_module.load(src / "search.json")
    index = search_module.SearchIndex(loaded.tools, thesaurus=loaded.thesaurus)
    lexical = index.search(BY_MEANING)
    monkeypatch.setattr(semantic, "Embedder", Slow)
    index.semantic = semantic.Semantic(src, [doc["tool"] for doc in index.docs])
    assert index.semantic.ready(wait=0.1) is None
    assert index.search(BY_MEANING) == lexical
    release.set()
    index.semantic.loading.join(60)
    assert index.search(BY_MEANING)[0]["operation"] == "GET /forecast/{city}"
