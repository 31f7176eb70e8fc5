"""Spec text never becomes Python (issue 24, items 1 and 7): every cut and edit of generated code is
placed by its syntax tree (typed_mcp.pysource), every generated module passes the guard
(typed_mcp.guard) before anything caches or imports it (as tidied: as it will be imported), and string literals hold line
breaks and control characters only as escapes. Through the real CLI and the MCP SDK client."""

from __future__ import annotations

import ast
import functools
import json
import sys
from pathlib import Path

import pytest
from mcp import Client

from support import CORPUS, DEMO, REPO, HttpServer, Reply, import_server, run_cli
from typed_mcp import guard
from typed_mcp.pysource import UNPRINTABLE, PySource

pytestmark = pytest.mark.anyio

# Every character str.splitlines() breaks a line at but Python's tokenizer does not.
SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
# Every control character and Unicode line break, tab and newline included.
CONTROLS = [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029"]


def _get(op_id: str, schema: dict, **extra) -> dict:
    return {
        "get": {
            "operationId": op_id,
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
            **extra,
        }
    }


def _generate(spec: dict, folder: Path, package: str, *extra: str):
    (folder / f"{package}.json").write_text(json.dumps(spec))
    return run_cli(
        "generate", str(folder / f"{package}.json"), "--out", str(folder / package), "--package-name", package,
        "--no-snapshot", *extra,
    )  # fmt: skip


def _python_files(package: Path) -> dict[Path, str]:
    return {path: path.read_text() for path in package.rglob("*.py") if "_runtime" not in path.parts}


# -- the source helper: positions as the tokenizer counts lines -------------------------------------------


def test_spans_are_the_standard_librarys_whatever_the_line_breaks_in_strings():
    source = (
        "a = 'x\u2028y' ; b = \"\x0c\x85\"\n"
        "c = '''\r\n\u2029é\x1c\r'''\rd = [1,\n  'ü\x0b', {'k': 'v\x1e'}]\n"
        "class E:\n    '''doc\u2028\x0c'''\n    f: 'G' = None\n"
    )
    code = PySource(source)
    nodes = [n for n in ast.walk(ast.parse(source)) if hasattr(n, "end_col_offset")]
    assert len(nodes) > 20
    for node in nodes:
        assert code.segment(node) == ast.get_source_segment(source, node), ast.dump(node)


# -- the guard, alone --------------------------------------------------------------------------------------

MODELS_HEADER = (
    "from typing import Annotated, Any, Literal\n"
    "from pydantic import ConfigDict, Field, RootModel\n"
    "from typed_mcp_runtime_base import OpenModel\n\n\n"
)
FINE_MODEL = (
    "class Pet(OpenModel):\n"
    '    """A pet."""\n'
    "    model_config = ConfigDict(extra='allow')\n"
    "    name: Annotated[str, Field(description='x', pattern='^a$')]\n"
    "    kind: Literal['cat', 'dog'] | None = 'cat'\n"
    "    tags: list['Tag'] | None = None\n\n\n"
    "class Tag(RootModel[dict[str, Any]]):\n    root: dict[str, Any]\n\n\n"
    "Pet.model_rebuild()\n"
)
HOSTILE_MODELS = {
    "a forward reference that calls": "class A(OpenModel):\n    x: 'os.system(\"id\")'\n",
    "a forward reference holding a string": "class A(OpenModel):\n    x: \"'Pet'\"\n",
    "__import__ in a default": "class A(OpenModel):\n    x: int = __import__('os')\n",
    "a top-level call": "print('x')\n",
    "a top-level assignment": "A = OpenModel\n",
    "a decorator": "@OpenModel\nclass A(OpenModel):\n    x: int\n",
    "import os": "import os\n",
    "from os import system": "from os import system\n",
    "a relative import in the code generator's output": "from . import x\n",
    "a lambda default": "class A(OpenModel):\n    x: int = lambda: 1\n",
    "an attribute chain": "class A(OpenModel):\n    x: int = Field(default=OpenModel.__subclasses__)\n",
    "an assignment expression": "class A(OpenModel):\n    x: int = Field((y := 1))\n",
    "a comprehension": "class A(OpenModel):\n    x: list[int] = [i for i in range(3)]\n",
    "an f-string": "class A(OpenModel):\n    x: str = f'{OpenModel}'\n",
    "a method": "class A(OpenModel):\n    def f(self):\n        pass\n",
    "a dunder field": "class A(OpenModel):\n    __class_getitem__: int = 1\n",
    "a metaclass": "class A(OpenModel, metaclass=type):\n    x: int\n",
    "a base that is no model": "class A(dict):\n    x: int\n",
    "a call in Literal": "class A(OpenModel):\n    x: Literal[print(1)]\n",
    "metadata that calls": "class A(OpenModel):\n    x: Annotated[int, print(1)]\n",
    "a Field argument that calls": "class A(OpenModel):\n    x: Annotated[int, Field(default=print(1))]\n",
    "**kwargs in a Field": "class A(OpenModel):\n    x: Annotated[int, Field(**{'a': 1})]\n",
    "an unknown generic": "class A(OpenModel):\n    x: type[int]\n",
    "an undefined name": "class A(OpenModel):\n    x: Undefined\n",
    "a class named like an import": "class Field(OpenModel):\n    x: int\n",
    "a config that calls": "class A(OpenModel):\n    model_config = ConfigDict(json_schema_extra=print)\n",
    "model_rebuild of a stranger": "OpenModel.model_rebuild()\n",
    "a global": "class A(OpenModel):\n    global x\n",
    "an exec in a docstring's place": "class A(OpenModel):\n    exec('1')\n",
    "a recursion limit without its import": "sys.setrecursionlimit(max(sys.getrecursionlimit(), 5))\n",
    "code that does not parse": "class A(OpenModel):\n    x: int = (\n",
    "a NUL": "class A(OpenModel):\n    x: str = 'a\x00'\n",
}


def test_the_guard_accepts_the_shapes_of_the_models():
    guard.check_models(MODELS_HEADER + FINE_MODEL)


@pytest.mark.parametrize("body", list(HOSTILE_MODELS.values()), ids=list(HOSTILE_MODELS))
def test_the_guard_refuses_hostile_model_code(body):
    with pytest.raises(guard.Refused):
        guard.check_models(MODELS_HEADER + FINE_MODEL + "\n\n" + body)


def test_the_guard_refuses_what_a_split_module_may_not_import():
    module = "from .._runtime import OpenModel\nfrom .tag import Tag\n\n\nclass Pet(OpenModel):\n    t: Tag\n"
    guard.check_models(module, split_module=True, classes={"Pet", "Tag"})
    for hostile in (
        module.replace("from .tag import Tag", "from .tag import system"),  # not a model class
        module.replace("from .._runtime import OpenModel", "from .._runtime import Api as OpenModel"),
        module.replace("from .._runtime import", "from ..server import"),
        module + "\nimport sys\nsys.setrecursionlimit(max(sys.getrecursionlimit(), int('9')))\n",
        module.replace("from .tag import Tag", "from .tag import Tag\nimport sys\nimport sys"),
    ):
        with pytest.raises(guard.Refused):
            guard.check_models(hostile, split_module=True, classes={"Pet", "Tag"})


TOOL = (DEMO / "src" / "weather_mcp" / "tools" / "get_forecast.py").read_text()
HOSTILE_TOOLS = {
    "import os": TOOL.replace("from ..upstream import api", "from ..upstream import api\nimport os"),
    "a second decorator": TOOL.replace("@tool(", "@staticmethod\n@tool("),
    "a decorator argument that calls": TOOL.replace("read_only=True", "read_only=print(1)"),
    "a default that calls": TOOL.replace("] = 3,", "] = __import__('os'),"),
    "a statement in the body": TOOL.replace("    return await", "    print(1)\n    return await"),
    "a string return type that calls": TOOL.replace("returns=list[WeatherData]", "returns='print(1)'"),
    "an annotation holding a call": TOOL.replace("days: Annotated[int,", "days: Annotated[print(1),"),
    "a statement after the function": TOOL + "print(1)\n",
    "another call": TOOL.replace("await api.call(", "await api.__class__("),
    "a body of another kind": TOOL.replace("json_body", "json_body").replace("wrap=True", "wrap=open('x')"),
    "a query that calls": TOOL.replace('"days": days', '"days": eval("1")'),
    "a parameter shadowing the call's names": TOOL.replace("city:", "list:").replace('"city": city', '"city": list'),
    "an import from elsewhere": TOOL.replace("from ..upstream import api", "from ..server import api"),
    "a lambda default": TOOL.replace("] = 3,", "] = lambda: 3,"),
}


def test_the_guard_accepts_the_tool_template_shape():
    guard.check_tool(TOOL, function="get_forecast", models={"WeatherData": "model"})


@pytest.mark.parametrize("text", list(HOSTILE_TOOLS.values()), ids=list(HOSTILE_TOOLS))
def test_the_guard_refuses_hostile_tool_code(text):
    assert text != TOOL
    with pytest.raises(guard.Refused):
        guard.check_tool(text, function="get_forecast", models={"WeatherData": "model"})


def test_template_shaped_modules_may_differ_in_strings_only():
    reference = '"""s1"""\n\nfrom ._about import VERSION\n\nENV = "s2"\nX = {"s3": ("s4", "s5")}\n'
    guard.same_shape('"""Doc"""\n\nfrom ._about import VERSION\n\nENV = "A"\nX = {"k": ("a", "b")}\n', reference)
    for hostile in (
        '"""Doc"""\n\nfrom ._about import VERSION\n\nENV = "A"; import os\nX = {"k": ("a", "b")}\n',
        '"""Doc"""\n\nfrom ._about import VERSION\n\nENV = A\nX = {"k": ("a", "b")}\n',
        '"""Doc"""\n\nfrom ._about import VERSION\nimport os\n\nENV = "A"\nX = {"k": ("a", "b")}\n',
        '"""Doc"""\n\nfrom ._about import VERSION\n\nENV = "A"\nX = {"k": ("a", "b"), "j": ("c", "d")}\n',
    ):
        with pytest.raises(guard.Refused):
            guard.same_shape(hostile, reference)


def corpus_package(name: str, folder: Path) -> Path:
    """A corpus spec generated (the run itself checks every module)."""
    out = folder / name.split(".")[0]
    proc = run_cli("generate", str(CORPUS / name), "--out", str(out), "--package-name", "corpus", "--no-snapshot")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(None, id="demo"),  # the committed demo package
        # Enums, inline models, allOf: half a minute each on 2 cores, so in make test-long.
        pytest.param("apisguru__gitlab.com.json", marks=pytest.mark.long),
        pytest.param("apisguru__azure.com_network-virtualWan.json", marks=pytest.mark.long),
    ],
)
def test_the_guard_accepts_every_module_of_the_demo_and_of_corpus_packages(spec, tmp_path):
    checked = 0
    package = DEMO if spec is None else corpus_package(spec, tmp_path)
    (src,) = [p for p in (package / "src").iterdir() if p.is_dir()]
    init = ast.parse((src / "models" / "__init__.py").read_text())
    tables = {
        n.targets[0].id: ast.literal_eval(n.value)
        for n in init.body
        if isinstance(n, ast.Assign) and n.targets[0].id in ("_MODULE_OF", "_IMPORTED")
    }
    exported = {**dict.fromkeys(tables["_MODULE_OF"], "model"), **{k: v[1] for k, v in tables["_IMPORTED"].items()}}
    for path in (src / "models").glob("*.py"):
        if path.name != "__init__.py":
            guard.check_models(path.read_text(), split_module=True, classes=tables["_MODULE_OF"])
            checked += 1
    for path in (src / "tools").glob("*.py"):
        if path.name != "__init__.py":
            guard.check_tool(path.read_text(), function=path.stem, models=exported)
            checked += 1
    assert checked > (20 if spec is None else 150)  # virtualWan: 176 modules


# -- spec text with every line break and control character --------------------------------------------------


def _controls_spec() -> dict:
    """One schema and one operation per character, the character in every text that reaches code."""
    schemas, paths = {}, {}
    for i, c in enumerate(CONTROLS):
        schemas[f"S{i}{c}n"] = {
            "type": "object",
            "title": f"T{c}",
            "description": f"D{c}e ''' \"\"\" {c}\\",
            "properties": {
                f"p{c}": {
                    "type": "string", "description": f"d{c}", "title": f"t{c}",
                    "enum": [f"a{c}", f"b{c}"], "default": f"a{c}", "example": f"e{c}",
                },
                "pat": {"type": "string", "pattern": f"^[^{c}]*$", "examples": [f"x{c}"]},
                "later": {"type": "integer"},
            },
        }  # fmt: skip
        paths[f"/c{i}"] = _get(
            f"op{c}{i}",
            {"$ref": f"#/components/schemas/S{i}{c}n"},
            summary=f"S{c}ummary",
            description=f"D{c}escription",
            parameters=[{"name": f"q{c}{i}", "in": "query", "schema": {"type": "string"}, "description": f"P{c}"}],
        )
    return {
        "openapi": "3.0.3",
        "info": {"title": "Controls " + "".join(CONTROLS), "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


async def test_every_control_character_in_every_spec_text_generates_and_serves(tmp_path, monkeypatch):
    proc = _generate(_controls_spec(), tmp_path, "controls-mcp")
    assert proc.returncode == 0, proc.stderr
    package = tmp_path / "controls-mcp"
    for path, text in _python_files(package).items():  # held as escapes only
        assert not UNPRINTABLE.search(text.replace("\t", "")), path
    with HttpServer() as server:
        monkeypatch.setenv("CONTROLS_MCP_BASE_URL", server.url)
        async with Client(import_server(package, "controls_mcp")) as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == len(CONTROLS)
            for i in (0, 10, 11, 13, 28, len(CONTROLS) - 1):  # NUL, "\n", "\v", "\r", FS, U+2029
                c = CONTROLS[i]
                # (a summary is one line of plain text: whitespace in it reads as a space)
                tool = next(t for t in tools if t.name.replace("_", "") == f"op{i}")
                assert tool.description.endswith(f"ummary\n\nD{c}escription"), tool.description
                server.routes[f"/c{i}"] = Reply(200, {f"p{c}": f"b{c}", "pat": "x", "later": 1})
                got = await client.call_tool(tool.name, {})
                assert not got.is_error, got.content
                assert got.structured_content == {f"p{c}": f"b{c}", "pat": "x", "later": 1}
                assert tool.output_schema["properties"][f"p{c}"]["enum"] == [f"a{c}", f"b{c}"]
                assert "later" in tool.output_schema["properties"]  # no field lost after the description


def _arrangement(folder: Path) -> dict:
    """The issue's arrangement, once per separator in one spec: `Alias{k}` (a list, so no tool
    imports its module) holds separators that shift the split by lines; `Victim{k}`'s module
    would then start inside that description, where a statement waits, and end inside its own,
    where a string the statement opened is closed. On lines, each statement runs on import."""
    schemas = {"Item": {"type": "object", "properties": {"a": {"type": "string"}}}}
    paths = {}
    shift = 5  # the lines from the payload to the victim's class line
    for k, sep in enumerate(SEPARATORS, start=1):
        marker = folder / f"ran-{ord(sep):04x}"
        payload = f'Victim{k} = OpenModel; __import__("pathlib").Path("{marker}").write_text("x"); _ = \'\'\''
        schemas[f"Alias{k}"] = {
            "type": "array",
            "items": {"$ref": "#/components/schemas/Item"},
            "description": sep * shift + payload + "\npad" * (shift * (k - 1)),
        }
        schemas[f"Victim{k}"] = {
            "type": "object",
            "description": "'''" + "\npad" * (shift * k - 5),
            "properties": {"b": {"type": "string"}},
        }
        for name in (f"Alias{k}", f"Victim{k}"):
            paths[f"/{name.lower()}"] = _get(f"get_{name.lower()}", {"$ref": f"#/components/schemas/{name}"})
    return {
        "openapi": "3.0.3",
        "info": {"title": "Shifted", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


async def test_separators_arranged_to_shift_the_split_run_nothing(tmp_path, monkeypatch):
    proc = _generate(_arrangement(tmp_path), tmp_path, "shifted-mcp")
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("ran-*"))  # no statement of the spec ran, during generation or after
    package = tmp_path / "shifted-mcp"
    models = package / "src" / "shifted_mcp" / "models"
    for k in range(1, len(SEPARATORS) + 1):
        tree = ast.parse((models / f"victim{k}.py").read_text())
        (victim,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        assert victim.name == f"Victim{k}" and [type(n) for n in tree.body[-1:]] == [ast.ClassDef]
    with HttpServer() as server:
        monkeypatch.setenv("SHIFTED_MCP_BASE_URL", server.url)
        server.routes["/victim3"] = Reply(200, {"b": "ok"})
        async with Client(import_server(package, "shifted_mcp")) as client:
            assert len((await client.list_tools()).tools) == 2 * len(SEPARATORS)
            got = await client.call_tool("get_victim3", {})
    assert not got.is_error and got.structured_content == {"b": "ok"}
    assert not list(tmp_path.glob("ran-*"))


# -- names the generated code itself uses (item 7) ------------------------------------------------------------

NAMES = [
    *("RootModel", "BaseModel", "Field", "Any", "List", "Optional", "Dict", "Literal", "datetime", "None"),
    *("class", "import", "1Thing", "a.b", "Pet", "pet", "PET", "ConfigDict", "AwareDatetime", "OpenModel"),
    *("CountedModel", "annotations", "sys", "json", "DataResult", "CallToolResult", "JsonValue", "Annotated"),
    *("tool", "api", "Date", "UriReference", "PropertyCount", "EmailStr", "Union"),
]


def _names_spec() -> dict:
    """A schema named like each name, each the answer of three tools (an object, a list, a map);
    plus a union that refers to itself (a quoted forward reference in a tool's type) and inline
    models the code generator names like imports (`Data.result` is `DataResult`)."""
    schemas: dict = {}
    paths: dict = {}
    for i, name in enumerate(NAMES):
        ref = {"$ref": f"#/components/schemas/{name}"}
        schemas[name] = {
            "type": "object",
            "properties": {
                "v": {"type": "string"},
                "when": {"type": "string", "format": "date-time"},
                # refers to the next name, in chains of four (a chain of 36 nested models is past the
                # recursion limit of pydantic's JSON schema generator, whatever their names)
                **(
                    {"next": {"$ref": f"#/components/schemas/{NAMES[i + 1]}"}}
                    if i % 4 != 3 and i + 1 < len(NAMES)
                    else {}
                ),
            },
            **({"minProperties": 1} if i % 2 else {}),
        }
        paths[f"/o{i}"] = _get(f"object_{i}", ref)
        paths[f"/l{i}"] = _get(f"list_{i}", {"type": "array", "items": ref})
        paths[f"/m{i}"] = _get(f"map_{i}", {"type": "object", "additionalProperties": ref})
    schemas["Tree"] = {"oneOf": [{"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}, {"type": "string"}]}
    inline = {"type": "object", "properties": {"x": {"type": "string"}}}
    for parent, child in (("Data", "result"), ("Open", "model"), ("Call", "tool_result"), ("Property", "count")):
        schemas[parent] = {"type": "object", "properties": {child: inline, "items": {"type": "array", "items": inline}}}
        paths[f"/{parent.lower()}"] = _get(parent.lower(), {"$ref": f"#/components/schemas/{parent}"})
    paths["/tree"] = _get("tree", {"$ref": "#/components/schemas/Tree"})
    return {
        "openapi": "3.0.3",
        "info": {"title": "Names", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


@pytest.mark.parametrize("profile", ["default", "data-tools"])
async def test_schemas_named_like_what_generated_code_uses_generate_and_serve(tmp_path, monkeypatch, profile):
    package = f"names-{profile}-mcp"  # one module name per package: this process imports both
    proc = _generate(_names_spec(), tmp_path, package, "--profile", profile)
    assert proc.returncode == 0, proc.stderr
    data = profile == "data-tools"
    module = package.replace("-", "_")
    with HttpServer() as server:
        monkeypatch.setenv(f"{module.upper()}_BASE_URL", server.url)
        async with Client(import_server(tmp_path / package, module)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert len(tools) == 3 * len(NAMES) + 5
            answers = {
                "/o0": ("object_0", {"v": "root", "when": "2026-01-01T00:00:00Z", "next": {"v": "base"}}),
                "/l9": ("list_9", [{"v": "none"}, {"v": "x", "next": {"v": "y"}}]),
                "/m24": ("map_24", {"a": {"v": "data result"}}),
                "/tree": ("tree", ["leaf", ["leaf"]]),
                "/data": ("data", {"result": {"x": "1"}, "items": [{"x": "2"}]}),
                "/open": ("open", {"model": {"x": "1"}}),
            }
            for path, (name, answer) in answers.items():
                server.routes[path] = Reply(200, json.dumps(answer))
                got = await client.call_tool(name, {})
                assert not got.is_error, (name, got.content)
                content = got.structured_content["data"] if data else got.structured_content
                assert content == answer or content == {"result": answer}, name
            # An inline model named like an import is itself, not the import: its fields are published.
            assert '"x": {' in json.dumps(tools["data"].output_schema)
            server.routes["/o3"] = Reply(200, {"v": 1})  # a mismatch is still caught
            assert (await client.call_tool("object_3", {})).is_error


def _hostile_step(monkeypatch, name: str, change) -> None:
    """Wrap the step `name` that makes the package's files (`pipeline.tidy`, which tidies them in place;
    `Package.complete`, which renders the tool modules) so that it then applies `change` to the first
    tool module it made: a renderer or tidier that let spec text through."""
    from typed_mcp import pipeline
    from typed_mcp.render.package import Package

    owner = pipeline if name == "tidy" else Package
    real = getattr(owner, name)

    def wrapped(*args, **kwargs):
        made = real(*args, **kwargs)
        files = args[1] if name == "tidy" else made
        tools = [p for p in files if "/tools/" in p and not p.endswith("__init__.py")]
        if tools:  # the models are tidied first, on their own
            path = min(tools)
            files[path] = change(files[path])
            if name == "tidy":
                (args[0] / path).write_text(files[path])
        return made

    monkeypatch.setattr(owner, name, wrapped)


@pytest.mark.parametrize(
    ("step", "change", "reason"),
    [
        # A statement slipped into a module after it was tidied: checked as it will be imported.
        ("tidy", lambda text: text + "\nimport os\nos.system('id')\n", "a statement that is not an import or the tool"),
        # A rendered module that does not parse: ruff cannot tidy it, the guard says which and why.
        ("complete", lambda text: text + "\n)(\n", "code that does not parse"),
    ],
    ids=["after-tidying", "does-not-parse"],
)
def test_every_module_is_checked_as_it_will_be_imported(tmp_path, monkeypatch, step, change, reason):
    from typed_mcp.errors import SpecError
    from typed_mcp.options import GenerateOptions
    from typed_mcp.pipeline import generate

    _hostile_step(monkeypatch, step, change)
    out = tmp_path / "out"
    options = GenerateOptions(source=str(REPO / "specs" / "weather-api.json"), out=out, verify=True, cache=False)
    with pytest.raises(SpecError, match="refused the generated tool module of operation") as refused:
        generate(options)
    assert reason in str(refused.value)
    assert not out.exists()  # nothing written, nothing imported


def test_many_modules_are_checked_in_two_processes_with_the_verdicts_of_one(tmp_path, monkeypatch):
    import os

    from typed_mcp.errors import SpecError
    from typed_mcp.render import package as rendered

    def checking(path: str, text: str) -> ast.Module:
        (tmp_path / f"{path}.{os.getpid()}").touch()  # which process checked it
        if "refuse" in text:
            raise SpecError(f"refused the generated {path}")
        return ast.parse(text)

    def package(texts: dict[str, str]) -> tuple[rendered.Package, dict[str, str]]:
        files = {f"m{i}.py": text for i, text in enumerate(texts.values())}
        guards = {path: functools.partial(checking, path) for path in files}
        return rendered.Package(dict(files), guards), files

    texts = {i: f"import json\nfrom os import path as p{i}\nX = {i}\n" for i in range(40)}
    alone, files = package(texts)
    alone.check(files)  # fewer than FORK_FILES: here
    assert {p.name.rpartition(".")[2] for p in tmp_path.iterdir()} == {str(os.getpid())}
    monkeypatch.setattr(rendered, "FORK_FILES", 4)
    together, files = package(texts)
    together.check(files)
    pids = {p.name.rpartition(".")[2] for p in tmp_path.iterdir() if p.name.startswith("m39.")}
    assert pids and pids != {str(os.getpid())}  # the second half, in another process
    assert together.heads == alone.heads and len(together.heads) == 40
    # Where fork is not safe (macOS) or missing (Windows): the same verdicts, all in this process.
    monkeypatch.setattr(sys, "platform", "darwin")
    for seen in tmp_path.iterdir():
        seen.unlink()
    here, files = package(texts)
    here.check(files)
    assert {p.name.rpartition(".")[2] for p in tmp_path.iterdir()} == {str(os.getpid())}
    assert here.heads == alone.heads
    monkeypatch.undo()
    monkeypatch.setattr(rendered, "FORK_FILES", 4)
    # The first module that fails is the one named, in either half.
    for refused in ([35], [30, 38], [3, 35]):
        broken, files = package({i: "refuse" if i in refused else text for i, text in texts.items()})
        with pytest.raises(SpecError, match=rf"^refused the generated m{refused[0]}\.py$"):
            broken.check(files)


def test_the_catalog_workers_prepare_only_once_every_module_on_disk_is_checked(tmp_path, monkeypatch):
    """The first catalog worker imports the models while the generator still renders and checks the
    tool modules: when it is told to (`prepare`), every module written so far, all that an import
    of the models may run, has passed its guard; by the end, every module has."""
    from typed_mcp.catalog.verify import CatalogWorkers
    from typed_mcp.options import GenerateOptions
    from typed_mcp.pipeline import generate
    from typed_mcp.render.package import Package

    checked: set[str] = set()
    check, prepare = Package.check, CatalogWorkers.prepare

    def checking(self, files):
        check(self, files)
        checked.update(path for path in files if path.endswith(".py"))

    written: list[list[str]] = []

    def preparing(self, src, module, count):
        on_disk = [path.relative_to(src.parent).as_posix() for path in src.rglob("*.py")]
        written.append(on_disk)
        assert sorted(set(on_disk) - checked) == []  # nothing unchecked for the worker to import
        prepare(self, src, module, count)

    monkeypatch.setattr(Package, "check", checking)
    monkeypatch.setattr(CatalogWorkers, "prepare", preparing)
    out = tmp_path / "out"
    generate(GenerateOptions(source=str(REPO / "specs" / "weather-api.json"), out=out, verify=True, cache=False))
    (on_disk,) = written
    assert any("/models/" in path for path in on_disk) and any(path.endswith("/_about.py") for path in on_disk)
    # And every module of the package was checked, those rendered after `prepare` too.
    assert {path.relative_to(out).as_posix() for path in out.rglob("*.py")} == checked
