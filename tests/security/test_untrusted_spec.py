"""Spec text is untrusted: it must never become code, and must arrive in the tools unchanged."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from mcp import Client

from support import generate, import_server
from typed_mcp.runtime import contracts

pytestmark = pytest.mark.anyio

PAYLOAD = "__import__('pathlib').Path('PWNED').write_text('x')"
NASTY = [
    f'"""; {PAYLOAD}; """',
    f"'''; {PAYLOAD}; '''",
    f'"; {PAYLOAD}; "',
    "{{ 7*7 }} {% if true %}jinja{% endif %} {# comment #}",
    "line one\nline two\r\n\ttabbed \\ backslash \\x41 \\N{BULLET} \x00 nul \u2028 sep",
    f'\\"""{PAYLOAD}',
    'ends with a quote"',
    "ends with a backslash\\",
]


def evil_spec() -> dict:
    text = "\n".join(NASTY)
    enum = NASTY[:4] + ["plain"]
    return {
        "openapi": "3.0.3",
        "info": {"title": f'Evil""" API {PAYLOAD}', "version": '1.0"; import os', "description": text},
        "servers": [{"url": "http://127.0.0.1:9/base"}],
        "paths": {
            "/items/{item-id}": {
                "get": {
                    "operationId": f'get"; {PAYLOAD} #',
                    "summary": NASTY[0],
                    "description": text,
                    "parameters": [
                        {
                            "name": "item-id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                            "description": NASTY[1],
                        },
                        {
                            "name": f'q"; {PAYLOAD}; "',
                            "in": "query",
                            "schema": {"type": "string", "enum": enum, "default": NASTY[0]},
                            "description": NASTY[3],
                        },
                        {"name": "class", "in": "query", "schema": {"type": "integer", "default": 3}},
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string", "default": NASTY[2]}},
                    ],
                    "responses": {
                        "200": {
                            "description": NASTY[2],
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "description": text,
                                        "required": ['na"me'],
                                        "properties": {
                                            'na"me': {"type": "string", "description": NASTY[0]},
                                            f"{PAYLOAD}": {"type": "string", "enum": enum},
                                            "def": {"type": "integer", "default": 1},
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            }
        },
    }


async def test_nasty_strings_stay_data(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "evil"
    generate(evil_spec(), out, "evil-api")
    src = out / "src" / "evil_api"
    imported_modules: set[str] = set()
    # The runtime is copied verbatim (it reads os.environ); everything else is rendered from the spec.
    runtime = Path(contracts.__file__).parent  # typed_mcp.runtime
    assert {p.name: p.read_text() for p in (src / "_runtime").iterdir()} == {
        p.name: p.read_text()
        for p in [*runtime.glob("*.py"), *runtime.glob("*.html")]
        if p.name not in ("datatools.py", "semantic.py")  # only in --profile data-tools, and with semantic on
    }
    for file in src.rglob("*.py"):
        tree = ast.parse(file.read_text())  # every file is valid Python
        if file.parent.name == "_runtime":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported_modules |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported_modules.add(node.module or "")
            # No call anywhere is made of spec text: __import__ may only appear inside strings.
            assert not (isinstance(node, ast.Name) and node.id == "__import__"), file
    assert "os" not in imported_modules  # server.py uses pathlib for its catalog; nothing imports os
    spec_text_files = [*src.glob("tools/*.py"), *src.glob("models/*.py"), src / "upstream.py", src / "_about.py"]
    assert len(spec_text_files) > 4
    for name in spec_text_files:  # the files spec text flows into
        tree = ast.parse(name.read_text())
        modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not modules & {"os", "pathlib", "subprocess"}, (name, modules)
    server = import_server(out, "evil_api")
    async with Client(server) as client:
        (tool,) = (await client.list_tools()).tools
    assert not (tmp_path / "PWNED").exists()
    assert tool.name.startswith("get_import_pathlib_path_pwned")
    assert set(tool.name) <= set("abcdefghijklmnopqrstuvwxyz0123456789_")
    assert tool.title == NASTY[0]
    assert tool.description == NASTY[0] + "\n\n" + "\n".join(NASTY)  # exactly the spec text
    properties = tool.input_schema["properties"]
    query = next(v for k, v in properties.items() if k.startswith("q_import"))
    assert query["enum"] == sorted(
        NASTY[:4] + ["plain"], key=repr
    )  # enums are written sorted (generator/typed_mcp/models/literals.py)
    assert query["default"] == NASTY[0]
    assert query["description"] == NASTY[3]
    assert properties["class_"]["default"] == 3
    assert properties["x_trace"]["default"] == NASTY[2]
    schema_text = json.dumps(tool.output_schema)
    assert "49" not in schema_text  # no template ever evaluated {{ 7*7 }}
    enum_schema = tool.output_schema["properties"][PAYLOAD]["anyOf"][0]  # optional: `| None`
    assert enum_schema["enum"] == sorted(NASTY[:4] + ["plain"], key=repr)  # enums are written sorted
    assert tool.output_schema["properties"]['na"me']["description"] == NASTY[0]
    readme = (out / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{tool.name}` |"))
    assert row.endswith(" |") and row.count(" | ") == 2  # the title's newlines and pipes cannot break the table
    assert (out / "pyproject.toml").read_text().count("\n[project]\n") == 1


async def test_payload_in_title_does_not_reach_pyproject_as_toml(tmp_path: Path):
    import tomllib

    spec = evil_spec()
    spec["info"]["title"] = 'x"\n[tool.evil]\nrun = "rm -rf /"\n'
    out = tmp_path / "evil2"
    generate(spec, out, "evil-two")
    data = tomllib.loads((out / "pyproject.toml").read_text())
    assert "tool" not in data or "evil" not in data.get("tool", {})
    assert data["project"]["description"].startswith('MCP server for x"\n[tool.evil]')
