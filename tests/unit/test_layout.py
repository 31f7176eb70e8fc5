"""The generated package's layout: one module per tool and per model (or group of mutually
recursive models), imported only when used, so big APIs start and answer a first call quickly."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, generate
from typed_mcp.models.modules import _strongly_connected, split


def test_groups_are_the_strongly_connected_models_dependencies_first():
    edges = {"A": ["B"], "B": ["C"], "C": ["B", "D"], "D": [], "E": ["E"], "F": ["A", "E"]}
    groups = _strongly_connected(list(edges), edges)
    assert sorted(map(tuple, groups)) == [("A",), ("B", "C"), ("D",), ("E",), ("F",)]
    position = {name: i for i, group in enumerate(groups) for name in group}
    assert all(position[child] <= position[name] for name, children in edges.items() for child in children)


def test_deep_chains_do_not_hit_the_recursion_limit():
    edges = {f"M{i}": [f"M{i + 1}"] for i in range(5000)} | {"M5000": ["M0"]}
    assert len(_strongly_connected(list(edges), edges)) == 1


def test_split_keeps_class_text_forward_references_and_rebuilds():
    source = (
        "from typing import Optional\nfrom pydantic import ConfigDict\nfrom ._runtime import OpenModel\n\n\n"
        "class Leaf(OpenModel):\n    v: int | None = None\n\n\n"
        'class Node(OpenModel):\n    """A node."""\n    children: Optional[list[\'Node\']] = None\n    other: Optional[\'Import\'] = None\n\n\n'
        "class Import(OpenModel):\n    back: Node | None = None\n    x: Leaf | None = None\n\n\n"
        "Node.model_rebuild()\n"
    )
    modules = split(source, "# header\n")
    assert modules.module_of == {"Leaf": "leaf", "Node": "node", "Import": "node"}
    node = modules.sources["node"]
    assert "from .leaf import Leaf\n" in node and "from .._runtime import OpenModel\n" in node
    assert "from typing import Optional\n" in node and "ConfigDict" not in node  # unused imports dropped
    assert '    """A node."""\n    children: Optional[list[\'Node\']] = None\n' in node  # text copied as written
    assert node.rstrip().endswith("Node.model_rebuild()")
    assert "Optional" not in modules.sources["leaf"]
    assert modules.imported == {
        "Optional": ("typing", "Optional"),
        "ConfigDict": ("pydantic", "ConfigDict"),
        "OpenModel": (".._runtime", "OpenModel"),
    }  # relative to models/__init__.py


def test_a_big_recursive_group_and_its_users_are_built_on_first_use():
    from typed_mcp.models.modules import LAZY_GROUP

    size = LAZY_GROUP + 1  # a ring of models, each referring to the next: one group
    ring = "".join(f"class M{i}(OpenModel):\n    next: Optional['M{(i + 1) % size}'] = None\n\n\n" for i in range(size))
    source = (
        "from typing import Optional\nfrom ._runtime import CountedModel, OpenModel\n\n\n"
        "class Leaf(OpenModel):\n    v: int | None = None\n\n\n"
        f"{ring}"
        "class Page(CountedModel):\n    items: list[M0] | None = None\n\n\n"
        "class Small(OpenModel):\n    again: Optional['Small'] = None\n    leaf: Leaf | None = None\n\n\n"
        + "".join(f"M{i}.model_rebuild()\n" for i in range(size))
        + "Small.model_rebuild()\n"
    )
    modules = split(source, "# header\n")
    group, page = modules.sources["m0"], modules.sources["page"]
    assert modules.module_of["M7"] == "m0" and modules.module_of["Page"] == "page"
    # The group and what uses it: deferred bases under the usual names, the class text as written,
    # no rebuild at import.
    assert "from .._runtime import DeferredOpenModel as OpenModel\n" in group and "model_rebuild" not in group
    assert "class M3(OpenModel):\n    next: Optional['M4'] = None\n" in group
    assert "from .._runtime import DeferredCountedModel as CountedModel\n" in page and "from .m0 import M0\n" in page
    assert all(text.splitlines()[1].startswith("# Built on first use") for text in (group, page))
    # Small groups, and models that use no big group, are built at import as before.
    for name in ("small", "leaf"):
        assert "Deferred" not in modules.sources[name] and "first use" not in modules.sources[name]
    assert modules.sources["small"].rstrip().endswith("Small.model_rebuild()")


def test_module_names_never_clash_with_keywords_or_imported_names():
    source = "from datetime import date as date_aliased\nfrom pydantic import BaseModel\n\n\n"
    for name in ("Import", "DateAliased", "Class2", "Class_2"):
        source += f"class {name}(BaseModel):\n    day: date_aliased\n\n\n"
    modules = split(source, "")
    assert modules.module_of["Import"] == "m_import"  # `from .import import Import` would not parse
    assert modules.module_of["DateAliased"] == "date_aliased_2"  # models/__init__ resolves `date_aliased` itself
    assert len(set(modules.module_of.values())) == 4
    for text in modules.sources.values():
        compile(text, "module", "exec")


RECURSIVE = {
    "openapi": "3.0.3",
    "info": {"title": "Tree", "version": "1"},
    "paths": {
        "/node": {
            "get": {
                "operationId": "getNode",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
                    }
                },
            }
        },
        "/other": {
            "get": {
                "operationId": "getOther",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Other"}}},
                    }
                },
            }
        },
    },
    "components": {
        "schemas": {
            "Node": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                    "link": {"$ref": "#/components/schemas/Link"},
                },
            },
            "Link": {
                "type": "object",
                "properties": {
                    "back": {"$ref": "#/components/schemas/Node"},
                    "leaf": {"$ref": "#/components/schemas/Leaf"},
                },
            },
            "Leaf": {"type": "object", "properties": {"v": {"type": "integer"}}},
            "Other": {"type": "object", "properties": {"w": {"type": "string"}}},
        }
    },
}

PROBE = """
import json, sys, anyio
from mcp import Client
from tree_mcp.server import build_server
from tree_mcp.models import Node

async def main():
    async with Client(build_server()) as client:
        before = sorted(m for m in sys.modules if m.startswith("tree_mcp."))
        result = await client.call_tool("get_node", {})
        after = sorted(m for m in sys.modules if m.startswith("tree_mcp."))
    node = Node.model_validate({"name": "a", "children": [{"name": "b", "link": {"leaf": {"v": 1}}}]})
    print(json.dumps({"before": before, "after": after, "error": result.is_error, "text": result.content[0].text,
                      "nested": node.children[0].link.leaf.v}))

anyio.run(main)
"""


@pytest.mark.slow  # generates with the CLI (a process)
def test_a_first_call_imports_only_its_tool_and_the_models_it_uses(tmp_path: Path):
    out = tmp_path / "tree"
    generate(RECURSIVE, out, "tree-mcp")
    src = out / "src" / "tree_mcp"
    assert sorted(p.name for p in (src / "tools").glob("*.py")) == ["__init__.py", "get_node.py", "get_other.py"]
    assert sorted(p.name for p in (src / "models").glob("*.py")) == ["__init__.py", "leaf.py", "node.py", "other.py"]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(out / "src"), "TREE_MCP_BASE_URL": "http://127.0.0.1:9", "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["nested"] == 1  # the recursive models, split apart from the package, still validate
    assert "tree_mcp.tools.get_node" not in seen["before"]  # listing imports no tool
    assert "tree_mcp.tools.get_node" in seen["after"] and "tree_mcp.models.node" in seen["after"]
    assert "tree_mcp.models.leaf" in seen["after"]  # a dependency of Link, which shares Node's module
    assert "tree_mcp.tools.get_other" not in seen["after"] and "tree_mcp.models.other" not in seen["after"]
    assert seen["error"] and "could not connect" in seen["text"]


def test_the_committed_demo_package_has_one_module_per_tool():
    src = REPO / "generated" / "weather-mcp" / "src" / "weather_mcp"
    manifest = json.loads((REPO / "generated" / "weather-mcp" / "typed-mcp.json").read_text())
    assert sorted(p.stem for p in (src / "tools").glob("*.py") if p.stem != "__init__") == sorted(manifest["tools"])


def test_type_aliases_are_split_like_models(tmp_path: Path, monkeypatch):
    # datamodel-code-generator writes some schemas (Cloudflare's) as `X = TypeAliasType("X", ...)`.
    source = (
        "from typing import Annotated\nfrom pydantic import BaseModel, Field\nfrom typing_extensions import TypeAliasType\n\n\n"
        "class RuleId(BaseModel):\n    id: str\n\n\n"
        'Rules = TypeAliasType("Rules", Annotated[list[RuleId], Field(min_length=1)])\n\n\n'
        "class Holder(BaseModel):\n    rules: Rules\n"
    )
    modules = split(source, "")
    assert modules.module_of == {"RuleId": "rule_id", "Rules": "rules", "Holder": "holder"}
    assert "from .rule_id import RuleId\n" in modules.sources["rules"]
    assert "from .rules import Rules\n" in modules.sources["holder"]
    package = tmp_path / "aliaspkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, text in modules.sources.items():
        (package / f"{module}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    holder = importlib.import_module("aliaspkg.holder").Holder
    assert holder.model_validate({"rules": [{"id": "a"}]}).rules[0].id == "a"


def test_literal_values_are_written_in_one_order():
    from typed_mcp.models.literals import canonical

    source = "a: Literal['update', 'delete', 'add'] | None = None\nb: Literal[2, 'x', 1]\nc: Literal['é', 'b']\n"
    assert (
        canonical(source)
        == "a: Literal['add', 'delete', 'update'] | None = None\nb: Literal[1, 2, 'x']\nc: Literal['b', 'é']\n"
    )
    # Characters that str.splitlines() would take for line breaks, inside strings, move nothing.
    odd = "d = 'x\u2028y\x0cz\x1c'\ne: Literal['b', 'a']\n"
    assert canonical(odd) == "d = 'x\u2028y\x0cz\x1c'\ne: Literal['a', 'b']\n"


ENUMS = {
    "openapi": "3.0.3",
    "info": {"title": "Enums", "version": "1"},
    "paths": {
        p: {
            "get": {
                "operationId": op,
                "parameters": [{"name": "mode", "in": "query", "schema": {"type": "string", "enum": order}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"action": {"type": "string", "enum": order}},
                                }
                            }
                        },
                    }
                },
            }
        }
        for p, op, order in (("/a", "getA", ["update", "delete", "add"]), ("/b", "getB", ["add", "update", "delete"]))
    },
}


@pytest.mark.slow  # generates with the CLI (a process)
def test_same_enum_in_two_orders_publishes_one_order(tmp_path: Path):
    """`typing` caches Literal[...] by its set of values: without one order, which schema a process
    publishes would depend on which module it imported first."""
    out = tmp_path / "enums"
    generate(ENUMS, out, "enums-mcp")
    catalog = (out / "src" / "enums_mcp" / "catalog.json").read_text()
    assert '"update","delete","add"' not in catalog and '"add","update","delete"' not in catalog
    assert catalog.count('"enum":["add","delete","update"]') == 4  # 2 tools x (input, output)
    # Every module writes the one order itself (the catalog alone may hide one that does not: the
    # first Literal of those values a process creates is the one every later order returns).
    for tool in ("get_a", "get_b"):
        source = (out / "src" / "enums_mcp" / "tools" / f"{tool}.py").read_text()
        assert "Literal['add', 'delete', 'update']" in source or 'Literal["add", "delete", "update"]' in source
