"""The failure classes `make directory` found in the APIs.guru collection, each reproduced by a small
spec written for it and generated through the real pipeline (the CLI, its listing checks on)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client

from harness.node_tools import TS1, TS2, StrictClient, ajv_accepts, run_ts_client
from support import HttpServer, Reply, generate, import_server
from typed_mcp.catalog.listing import list_all_tools

COMPONENT = "#/components/schemas/"


def _spec(title: str, paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = {"openapi": "3.0.0", "info": {"title": title, "version": "1"}, "servers": [{"url": "http://127.0.0.1:9"}]}
    return {**spec, "paths": paths, **({"components": {"schemas": schemas}} if schemas else {})}


def _get(operation: str, schema: dict[str, Any], parameters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A GET whose 200 answers JSON of `schema`."""
    answer = {"description": "ok", "content": {"application/json": {"schema": schema}}}
    return {"get": {"operationId": operation, "parameters": parameters or [], "responses": {"200": answer}}}


def _post(operation: str, body: str, answer: str) -> dict[str, Any]:
    return {
        "post": {
            "operationId": operation,
            "requestBody": {"content": {"application/json": {"schema": {"$ref": COMPONENT + body}}}},
            "responses": {
                "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": COMPONENT + answer}}}}
            },
        }
    }


def aws_like_spec(count: int = 30) -> dict[str, Any]:
    """What AWS specs (converted from Smithy) do hundreds of times: a request declared before the
    scalar components its properties use, each property named like its component and written
    `allOf: [{$ref}, {description}]`. The code generator names the `allOf` site after the property,
    which is the component's name. Plus an inline model (`Order.items` -> `OrderItems`) that holds
    the name of a component declared after it."""
    fields = [f"Field{i:02d}" for i in range(count)]
    # And keys that are not their class name (`VpceName00`), under properties whose class name is.
    upper = [f"VPCEName{i:02d}" for i in range(5)]
    properties = {f: {"allOf": [{"$ref": COMPONENT + f}, {"description": f"the {f}"}]} for f in fields}
    properties.update(
        {f"vpceName{i:02d}": {"allOf": [{"$ref": COMPONENT + u}, {"title": u}]} for i, u in enumerate(upper)}
    )
    schemas: dict[str, Any] = {
        "PutRequest": {"type": "object", "required": fields[:2], "properties": properties},
        "PutResult": {
            "type": "object",
            "properties": {"Field00": {"allOf": [{"$ref": COMPONENT + "Field00"}, {"description": "echo"}]}},
        },
        "Order": {
            "type": "object",
            "properties": {"items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        },
        "OrderItems": {"type": "object", "required": ["z"], "properties": {"z": {"type": "string"}}},
    }
    schemas.update({f: {"type": "string", "minLength": 1, "maxLength": 50} for f in fields + upper})
    paths = {"/put": _post("Put", "PutRequest", "PutResult"), "/items": _post("ListItems", "Order", "OrderItems")}
    return _spec("Names", paths, schemas)


def test_class_names_settle_by_construction_where_inline_sites_take_component_names(tmp_path):
    # On the old code: "model generation: could not settle class names after 20 renames" (one
    # code generator run per name; 30 names here).
    out = tmp_path / "names"
    generate(aws_like_spec(), out, "names-api")
    tools = _listed(out, "names_api")
    models = importlib.import_module("names_api.models")
    # Every component keeps its own readable name and is the scalar it declares.
    assert models.Field29.model_validate("x").root == "x"
    with pytest.raises(ValueError):
        models.Field29.model_validate("")
    # The component that an inline model's name (OrderItems) would have shadowed is still the component.
    items = tools["list_items"]["outputSchema"]
    assert items["required"] == ["z"] and set(items["properties"]) == {"z"}
    put = tools["put"]["inputSchema"]["$defs"]["PutRequest"]
    # Required, so not nullable; the description the old code dropped is kept.
    assert put["properties"]["Field01"] == {"$ref": "#/$defs/Field01", "description": "the Field01"}
    assert models.VpceName04.model_validate("v").root == "v"
    field = tools["put"]["inputSchema"]["$defs"]["Field01"]
    assert {k: v for k, v in field.items() if k != "title"} == {"maxLength": 50, "minLength": 1, "type": "string"}


def test_models_without_any_object_model_generate_and_validate(tmp_path):
    # On the old code: "model generation: the base model import is missing" (the code generator
    # imports the base model only when some model is an object).
    paths = {
        "/symbols": _get("getSymbols", {"type": "array", "items": {"type": "string"}}),
        "/quotes": {"get": {"operationId": "getQuotes", "responses": {"200": {"description": "no schema"}}}},
    }
    spec = _spec("Symbols", paths)
    out = tmp_path / "symbols"
    generate(spec, out, "symbols-api")
    tools = _listed(out, "symbols_api")
    assert tools["get_symbols"]["outputSchema"]["properties"]["result"]["type"] == "array"

    async def call(answer: Any) -> Any:
        async with Client(import_server(out, "symbols_api")) as client:
            upstream.routes["/symbols"] = Reply(200, answer)
            return await client.call_tool("get_symbols", {})

    with HttpServer() as upstream, pytest.MonkeyPatch.context() as env:
        env.setenv("SYMBOLS_API_BASE_URL", upstream.url)
        good = anyio.run(call, ["EURUSD", "GBPJPY"])
        bad = anyio.run(call, [1, 2])
    assert not good.is_error and good.structured_content == {"result": ["EURUSD", "GBPJPY"]}
    assert bad.is_error


def test_a_dotted_schema_name_keeps_the_models_one_module(tmp_path):
    # On the old code: "model generation produced several modules; expected one" (the code generator
    # made a dot in a schema's name a module when the schema's items were an inline model).
    items = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
    spec = _spec(
        "Dotted",
        {"/diag": _get("getDiag", {"$ref": COMPONENT + "rfdiag.response"})},
        {"rfdiag.response": {"type": "array", "items": items}},
    )
    out = tmp_path / "dotted"
    generate(spec, out, "dotted-api")
    tools = _listed(out, "dotted_api")
    assert tools["get_diag"]["outputSchema"]["properties"]["result"]["type"] == "array"
    assert importlib.import_module("dotted_api.models").RfdiagResponse.model_validate([{"id": "a"}]).root[0].id == "a"


def test_a_keyword_value_of_the_wrong_type_is_dropped_not_fatal(tmp_path):
    # On the old code: "model generation failed: SchemaParseError: ... validation errors for JsonSchemaObject"
    # for the whole spec (api.video writes `pattern: 0`).
    payload = {
        "type": "object",
        "required": ["timecode"],
        "properties": {
            "timecode": {"type": "string", "pattern": 0, "maxLength": "12"},
            "count": {"type": "integer", "minimum": "1", "exclusiveMaximum": True, "maximum": 9},
        },
    }
    spec = _spec("Thumbs", {"/pick": _get("pick", {"$ref": COMPONENT + "Pick"})}, {"Pick": payload})
    out = tmp_path / "thumbs"
    generate(spec, out, "thumbs-api")
    schema = _listed(out, "thumbs_api")["pick"]["outputSchema"]
    assert schema["properties"]["timecode"] == {"type": "string"}
    count = schema["properties"]["count"]["anyOf"][0]
    assert count == {"type": "integer", "exclusiveMaximum": 9}  # the well-formed bound kept


# pattern in the spec -> what every engine reads alike (None: no common form, dropped)
SPACE = r"\t\n\x0B\f\r \xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF"  # ECMA-262's \s
PATTERNS = {
    r"^[[A-Z0-9]{1,18}$": r"^[\[A-Z0-9]{1,18}$",  # Rust: a nested class, unclosed; pydantic refused to start
    r"^https\://\S+$": rf"^https://[^{SPACE}]+$",  # AJV's `u` mode: "Invalid escape"; `\S` ECMA-262's
    r"^[\w-]+\d*\D$": r"^[A-Za-z0-9_-]+[0-9]*[^0-9]$",  # ASCII in ECMA-262, Unicode in `re` and Rust
    r"^[\W]$": r"^(?:[^A-Za-z0-9_])$",  # a class cannot hold a complement: an alternation can
    r"[\s\S]*": rf"(?:[^{SPACE}]|[{SPACE}])*",
    r"^[^\W]$": None,  # a complement inside a complement has no such form
    r"^a.b$": r"^a[^\n\r\u2028\u2029]b$",  # ECMA-262's `.` takes no line terminator
    r"^[^/:|\000-\037]+$": r"^[^/:|\x00-\x1F]+$",  # AJV's `u` mode: "Invalid class escape"; Rust: no octal
    r"^(?<year>\d{4})$": r"^(?:[0-9]{4})$",  # Python's `re`: no `(?<name>`
    r"^a\-b[\-x]\/$": r"^a-b[\-x]\/$",
    r"^a\\w$": r"^a\\w$",  # an escaped backslash and a `w`
    r"^abc\Z": None,  # `\Z` means the end in Python, a `Z` in ECMA-262
    r"^a\u002Fb$": r"^a\u002Fb$",
    r"[\u0020-\uD7FF\uD800\uDBFF-\uDC00\uDFFF]*": None,  # surrogates: Rust "not a Unicode scalar value"
    # No linear-time engine: backreferences, lookarounds (and so the ASCII word boundaries), flags.
    r"^(a)\1$": None,
    r"^caf\b": None,
    r"^(?=a)[a-z]+$": None,
    r"(?i)^abc$": None,
    # A syntax error in ECMA-262's `u` mode that Python's `re` reads.
    r"^a{,5}$": None,
    r"^a}$": None,
    # Past the size a linear check may cost per character once repetitions are written out.
    r"^(?:.{1,100}){1,100}!": None,
    r"^\S{1,20000}$": None,
    r"^a[ab]{252}!$": r"^a[ab]{252}!$",
    r"^[a-z]{1,300}$": None,
}


def test_patterns_are_written_in_the_form_every_engine_reads_alike():
    from typed_mcp.spec.patterns import portable_pattern  # here: the old code had no such module

    assert {pattern: portable_pattern(pattern) for pattern in PATTERNS} == PATTERNS


def test_patterns_one_engine_refuses_no_longer_stop_the_server_or_a_strict_listing(tmp_path):
    # On the old code: exit 7 "the generated package does not start: error: unclosed character class"
    # (`[[`), and with that fixed alone the TypeScript client's listing ends in a SyntaxError (`\:`, `\000`).
    answer = {
        "type": "object",
        "properties": {
            "fare": {"type": "string", "pattern": r"^[[A-Z0-9]{1,18}$"},
            "link": {"type": "string", "pattern": r"^https\://\S+$"},
        },
    }
    # Not in the model: an octal escape there makes the code generator choose Python's engine for
    # the whole model, which would hide what Rust makes of `[[`.
    stream = {"type": "string", "pattern": r"^[^/:|\000-\037]+$"}
    parameters = [{"name": "stream", "in": "path", "required": True, "schema": stream}]
    paths = {"/fares/{stream}": _get("getFare", {"$ref": COMPONENT + "Fare"}, parameters)}
    spec = _spec("Fares", paths, {"Fare": answer})
    out = tmp_path / "fares"
    generate(spec, out, "fares-api")
    good = {"fare": "[AB12", "link": "https://fares.example/1"}
    bad = {"fare": "ab", "link": "https://fares.example/1"}
    with HttpServer() as upstream:
        upstream.routes["/fares/s1"] = lambda _: Reply(200, good if len(upstream.seen) == 1 else bad)
        run = run_ts_client(
            [sys.executable, "-m", "fares_api", "--base-url", upstream.url],
            {"PYTHONPATH": str(out / "src")},
            [{"name": "get_fare", "arguments": {"stream": "s1"}}] * 2,
            compile_schemas=True,
        )
    assert run["schemas"]["failures"] == [] and run["schemas"]["compiled"] == 2
    first, second = run["results"]
    assert first["ok"] and not first["isError"] and first["structuredContent"] == good
    assert second["isError"] and "fare" in second["text"]  # the model reads the pattern as the spec means it
    schema = _listed(out, "fares_api")["get_fare"]["outputSchema"]
    fare = schema["properties"]["fare"]
    assert fare["anyOf"][0]["pattern"] == r"^[\[A-Z0-9]{1,18}$"  # optional: string or null
    # The pattern still means what the spec says, in the model and in the published schema.
    assert jsonschema.Draft202012Validator(schema).is_valid(good)
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


def _strict_answers(out: Path, module: str, answers: list[Any]) -> Iterator[list[dict[str, Any]]]:
    """For each TypeScript client line, the results of `get_me` called once for each of `answers`
    (the upstream gives them in turn), the listing's schemas compiled by the client's AJV."""
    for client in (TS1, TS2):
        with HttpServer() as upstream:
            upstream.routes["/me"] = _in_turn(answers)
            run = run_ts_client(
                [sys.executable, "-m", module, "--base-url", upstream.url],
                {"PYTHONPATH": str(out / "src")},
                [{"name": "get_me", "arguments": {}}] * len(answers),
                compile_schemas=True,
                client=client,
            )
        assert run["schemas"]["failures"] == []
        yield run["results"]


def _answering(tmp_path: Path, title: str, properties: dict[str, Any], required: list[str]) -> Path:
    """A package whose `get_me` answers an object of `properties` (its models built from them)."""
    answer = {"type": "object", "required": required, "properties": properties}
    spec = _spec(title, {"/me": _get("getMe", {"$ref": COMPONENT + "Me"})}, {"Me": answer})
    out = tmp_path / title.lower()
    generate(spec, out, f"{title.lower()}-api")
    return out


def _ecma_accepts(pairs: list[tuple[str, str]]) -> list[bool]:
    """Whether ECMA-262 lets each value match its pattern, as both TypeScript lines' AJV read them."""
    cases = [({"type": "string", "pattern": pattern}, value) for pattern, value in pairs]
    accepted = ajv_accepts(cases, line=1)
    assert ajv_accepts(cases, line=2) == accepted
    return accepted


def test_ascii_classes_mean_for_the_server_what_they_mean_for_strict_clients(tmp_path):
    # On the old code: the server passed `café` for `^\w+$` (Unicode `\w` in pydantic-core and in
    # `re`), and the strict clients, whose AJV reads it as ECMA-262's ASCII class, refused the answer
    # with -32602: the call failed in the client instead of being the server's error naming the field.
    user, code = r"^\w+$", r"^\d{3}$"
    properties = {"user": {"type": "string", "pattern": user}, "code": {"type": "string", "pattern": code}}
    out = _answering(tmp_path, "Handles", properties, ["user"])
    answers = [{"user": "cafe_1", "code": "123"}, {"user": "café"}, {"user": "x", "code": "\u0661\u0662\u0663"}]
    pairs = [(user, "cafe_1"), (user, "café"), (code, "\u0661\u0662\u0663")]
    assert _ecma_accepts(pairs) == [True, False, False]  # ECMA-262: ASCII
    for results in _strict_answers(out, "handles_api", answers):
        assert all(r["ok"] for r in results), results  # no -32602 from the client: the server judged
        assert [r["isError"] for r in results] == [False, True, True]
        assert results[0]["structuredContent"] == answers[0]
        assert "user" in results[1]["text"] and "code" in results[2]["text"]


def test_word_boundaries_are_dropped_and_the_server_judges_as_strict_clients(tmp_path):
    # Before issue 24: `\b` and `\B` were Unicode boundaries for the server and ASCII ones for AJV, so
    # their ASCII form (lookarounds) was checked with Python's backtracking `re`. No linear-time engine
    # reads a lookaround, so such a pattern is now dropped (with a note): the published schema is as
    # open as the server, and both accept what REST sends.
    word, tail = r"^caf\b", r"^caf\B"
    properties = {"word": {"type": "string", "pattern": word}, "tail": {"type": "string", "pattern": tail}}
    out = _answering(tmp_path, "Bounds", properties, ["word"])
    answers = [{"word": "café"}, {"word": "caf", "tail": "café"}, {"word": "caf-x", "tail": "cafe"}]
    for results in _strict_answers(out, "bounds_api", answers):
        assert all(r["ok"] for r in results), results  # no -32602 from the client
        assert [r["isError"] for r in results] == [False, False, False], results
        assert [r["structuredContent"] for r in results] == answers
    notes = json.loads((out / "typed-mcp.json").read_text())["notes"]
    assert [n for n in notes if "word boundary" in n] == [
        r"#/components/schemas/Me/properties/word/pattern: a word boundary (\b): ASCII in ECMA-262, Unicode in re and Rust: dropped",
        r"#/components/schemas/Me/properties/tail/pattern: a word boundary (\B): ASCII in ECMA-262, Unicode in re and Rust: dropped",
    ]


# Answers a tool with an untyped answer takes: an object, and what is no object.
LOOSE_ANSWERS = {"obj": {"id": 7, "tags": ["a"]}, "list": [1, "two", None], "text": "just a string", "none": None}


def loose_spec() -> dict[str, Any]:
    """Answers whose schema is not certainly an object: untyped through an alias (`Alias` -> `Loose`,
    a schema with a description only: the models' `RootModel[Loose]` over `RootModel[Any]`), an
    object or an array, a nullable object, and an alias of an object."""
    kind = [{"name": "kind", "in": "path", "required": True, "schema": {"type": "string"}}]
    obj = {"type": "object", "properties": {"id": {"type": "integer"}}}
    paths = {
        "/loose/{kind}": _get("getLoose", {"$ref": COMPONENT + "Alias"}, kind),
        "/either": _get("getEither", {"anyOf": [{"$ref": COMPONENT + "Obj"}, {"type": "array", "items": {}}]}),
        "/maybe": _get("getMaybe", {**obj, "nullable": True}),
        "/same": _get("getSame", {"$ref": COMPONENT + "ObjAlias"}),
    }
    schemas = {
        "Loose": {"description": "whatever the vendor sends"},
        "Alias": {"$ref": COMPONENT + "Loose"},
        "Obj": obj,
        "ObjAlias": {"allOf": [{"$ref": COMPONENT + "Obj"}], "description": "an alias"},
    }
    return _spec("Loose", paths, schemas)


@pytest.fixture(scope="module")
def loose_package(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("loose") / "loose"
    generate(loose_spec(), out, "loose-api")
    return out


def test_answers_not_certainly_objects_publish_an_object_schema_to_the_python_client(loose_package):
    # On the old code: get_loose's outputSchema was `{"description": ..., "title": "Loose"}`, no
    # `"type": "object"` (the SDK publishes a RootModel class as it is), while the server wrapped
    # the answer in {"result": ...}: the structuredContent did not match the published schema.
    tools = _listed(loose_package, "loose_api")
    for name in ("get_loose", "get_either", "get_maybe", "get_same"):
        assert tools[name]["outputSchema"]["type"] == "object", name
    for name in ("get_loose", "get_either", "get_maybe"):
        assert tools[name]["outputSchema"]["required"] == ["result"], name
    assert "result" not in tools["get_same"]["outputSchema"]["properties"]  # an object: as it is

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        async with Client(import_server(loose_package, "loose_api")) as client:
            return await client.call_tool(name, arguments)

    with HttpServer() as upstream, pytest.MonkeyPatch.context() as env:
        env.setenv("LOOSE_API_BASE_URL", upstream.url)
        for kind, answer in LOOSE_ANSWERS.items():
            upstream.routes[f"/loose/{kind}"] = Reply(200, json.dumps(answer))  # a str: JSON too
        upstream.routes["/same"] = Reply(200, {"id": 1})
        results = {kind: anyio.run(call, "get_loose", {"kind": kind}) for kind in LOOSE_ANSWERS}
        same = anyio.run(call, "get_same", {})
    schema = tools["get_loose"]["outputSchema"]
    for kind, answer in LOOSE_ANSWERS.items():
        result = results[kind]
        assert not result.is_error and result.structured_content == {"result": answer}, kind
        assert jsonschema.Draft202012Validator(schema).is_valid(result.structured_content)
    assert not same.is_error and same.structured_content == {"id": 1}
    assert jsonschema.Draft202012Validator(tools["get_same"]["outputSchema"]).is_valid(same.structured_content)


@pytest.mark.parametrize("client", (TS1, TS2), ids=lambda c: c.id)
def test_answers_not_certainly_objects_list_and_call_in_both_typescript_lines(loose_package, client: StrictClient):
    # On the old code: the 1.x client refused the whole tools/list (its zod check wants an
    # outputSchema of type object), as it did for `enode.io` and `exlibrisgroup.com/tasklists`.
    calls = [{"name": "get_loose", "arguments": {"kind": kind}} for kind in LOOSE_ANSWERS]
    calls += [{"name": "get_either", "arguments": {}}, {"name": "get_either", "arguments": {}}]
    calls += [{"name": "get_maybe", "arguments": {}}, {"name": "get_same", "arguments": {}}]
    with HttpServer() as upstream:
        for kind, answer in LOOSE_ANSWERS.items():
            upstream.routes[f"/loose/{kind}"] = Reply(200, json.dumps(answer))  # a str: JSON too
        upstream.routes["/either"] = _in_turn([{"id": 2}, ["x", 3]])
        upstream.routes["/maybe"] = Reply(200, "null")
        upstream.routes["/same"] = Reply(200, {"id": 1})
        run = run_ts_client(
            [sys.executable, "-m", "loose_api", "--base-url", upstream.url],
            {"PYTHONPATH": str(loose_package / "src")},
            calls,
            compile_schemas=True,
            client=client,
        )
    assert run["schemas"]["failures"] == [] and run["schemas"]["compiled"] == 8  # inputs and outputs
    got = [(r["ok"], r["isError"], r["structuredContent"]) for r in run["results"]]
    wanted = [{"result": answer} for answer in LOOSE_ANSWERS.values()]
    wanted += [{"result": {"id": 2}}, {"result": ["x", 3]}, {"result": None}, {"id": 1}]
    assert got == [(True, False, structured) for structured in wanted]


BIG = r"^\S{1,20000}$"  # a Unicode class repeated: past the size limit of pydantic-core's Rust regex


def test_a_pattern_too_big_for_a_linear_check_is_dropped(tmp_path):
    # Before issue 24: a pattern past the Rust regex's size limit made its model check every pattern
    # with Python's backtracking `re`. Now a pattern longer than patterns.MAX_SIZE once its
    # repetitions are written out is dropped (with a note), in the model and the published schema,
    # which stays no stricter than the server: both accept what the pattern would have refused.
    word = {"type": "string", "pattern": r"^[^\s-]{1,20000}(-[^\s-]+)?$"}
    big = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "pattern": BIG}}}
    big["properties"]["word"] = {"$ref": COMPONENT + "Word"}
    paths = {
        "/big": _get("getBig", {"$ref": COMPONENT + "Big"}),
        "/words": _get("getWords", {"type": "array", "items": {"$ref": COMPONENT + "Word"}}),
    }
    out = tmp_path / "big"
    generate(_spec("Big", paths, {"Big": big, "Word": word}), out, "big-api")
    tools = _listed(out, "big_api")
    schema, words = tools["get_big"]["outputSchema"], tools["get_words"]["outputSchema"]
    assert "pattern" not in json.dumps(schema) and "pattern" not in json.dumps(words)
    answers = {"/big": [{"name": "ok_1", "word": "a-b"}, {"name": "no spaces"}], "/words": [["a b"]]}
    with HttpServer() as upstream:
        for path, replies in answers.items():
            upstream.routes[path] = _in_turn(replies)
        run = run_ts_client(
            [sys.executable, "-m", "big_api", "--base-url", upstream.url],
            {"PYTHONPATH": str(out / "src")},
            [{"name": "get_big", "arguments": {}}] * 2 + [{"name": "get_words", "arguments": {}}],
            compile_schemas=True,
        )
    assert run["schemas"]["failures"] == []
    results = run["results"]
    assert [(r["ok"], r["isError"]) for r in results] == [(True, False)] * 3, results
    assert results[1]["structuredContent"] == {"name": "no spaces"}
    notes = json.loads((out / "typed-mcp.json").read_text())["notes"]
    assert (
        "#/components/schemas/Big/properties/name/pattern: 20000 characters long once its repetitions are written out (more than 256): dropped"
        in notes
    )
    assert any(n.startswith("#/components/schemas/Word/pattern: 20") for n in notes), notes


def _in_turn(answers: list[Any]) -> Any:
    """A route that gives `answers` one request after another."""
    replies = iter(answers)
    return lambda _: Reply(200, next(replies))


def _listed(out: Path, module: str) -> dict[str, dict[str, Any]]:
    """The package's tools as its server lists them to the MCP Python SDK's client."""

    async def listing() -> list[Any]:
        async with Client(import_server(out, module)) as client:
            return await list_all_tools(client)

    tools = anyio.run(listing)
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools}


def test_a_schema_the_code_generator_made_several_models_of_keeps_its_name():
    # Cloudflare: a union member (`rulesets_BlockRule`) gives its own class and a variant of the
    # union's; read as one class per source, the name never settled ("in 3 passes").
    from typed_mcp.models.codegen import misnamed  # here: the old code had no such function

    block = "#/components/schemas/rulesets_BlockRule"
    given = [(block, "RulesetsBlockRule"), (block, "RulesetsResponseRule1"), ("#/components/schemas/x/items", "X")]
    assert misnamed({"rulesets_BlockRule": "RulesetsBlockRule", "Other": "Other"}, given) == []
    # Named otherwise, or not a model while another model holds the name: misnamed.
    assert misnamed({"rulesets_BlockRule": "Block", "x": "X"}, given) == ["rulesets_BlockRule", "x"]


# enode.io: answers and properties that reuse another operation's schema through a pointer into
# `paths` (percent-encoded in the fragment, RFC 6901 section 6), not a component.
VEHICLE = "#/paths/~1vehicles~1%7BvehicleId%7D/get/responses/200/content/application~1json/schema"


def borrowed_refs_spec() -> dict[str, Any]:
    vehicle = {
        "type": "object",
        "required": ["id", "charging"],
        "properties": {
            "id": {"type": "string"},
            "charging": {"type": "boolean"},
            "battery": {"type": "object", "properties": {"level": {"type": "number"}}},
            # A ref inside the borrowed schema, to a part of itself.
            "previous": {"$ref": VEHICLE + "/properties/battery"},
        },
    }
    vehicle_id = [{"name": "vehicleId", "in": "path", "required": True, "schema": {"type": "string"}}]
    limit = {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 50}}
    borrowed_limit = {"name": "limit", "in": "query", "schema": {"$ref": "#/paths/~1fleet/get/parameters/0/schema"}}
    paths = {
        "/vehicles/{vehicleId}": _get("getVehicle", vehicle, vehicle_id),
        "/primary": _get("getPrimaryVehicle", {"$ref": VEHICLE}, [borrowed_limit]),
        "/fleet": _get("getFleet", {"$ref": COMPONENT + "Fleet"}, [limit]),
    }
    schemas = {"Fleet": {"type": "object", "required": ["primary"], "properties": {"primary": {"$ref": VEHICLE}}}}
    return _spec("Borrowed", paths, schemas)


def test_schemas_borrowed_through_a_pointer_into_paths_keep_their_types(tmp_path):
    out = tmp_path / "borrowed"
    generate(borrowed_refs_spec(), out, "borrowed-api")
    tools = _listed(out, "borrowed_api")
    primary, own = tools["get_primary_vehicle"]["outputSchema"], tools["get_vehicle"]["outputSchema"]
    assert set(primary["properties"]) == {"id", "charging", "battery", "previous"}
    assert primary == own  # one model, not two copies
    good = {"id": "v1", "charging": True, "battery": {"level": 0.5}}
    assert jsonschema.Draft202012Validator(primary).is_valid(good)
    assert not jsonschema.Draft202012Validator(primary).is_valid({"id": 1, "charging": True})
    fleet = tools["get_fleet"]["outputSchema"]
    assert jsonschema.Draft202012Validator(fleet).is_valid({"primary": good})
    assert not jsonschema.Draft202012Validator(fleet).is_valid({"primary": {"id": "v1", "charging": "yes"}})
    limit = jsonschema.Draft202012Validator(tools["get_primary_vehicle"]["inputSchema"])
    assert limit.is_valid({"limit": 50}) and not limit.is_valid({"limit": 51})
    with HttpServer() as upstream:
        upstream.routes["/primary"] = _in_turn([good, {"id": "v1", "charging": "yes"}])
        upstream.routes["/fleet"] = _in_turn([{"primary": good}, {"primary": {"id": 7, "charging": False}}])
        run = run_ts_client(
            [sys.executable, "-m", "borrowed_api", "--base-url", upstream.url],
            {"PYTHONPATH": str(out / "src")},
            [{"name": "get_primary_vehicle", "arguments": {"limit": 3}}] * 2
            + [{"name": "get_fleet", "arguments": {}}] * 2,
            compile_schemas=True,
        )
    assert run["schemas"]["failures"] == [] and run["schemas"]["compiled"] == 6  # input and output, three tools
    results = run["results"]
    assert all(r["ok"] for r in results), results
    assert [r["isError"] for r in results] == [False, True, False, True]
    assert results[0]["structuredContent"] == good and results[2]["structuredContent"] == {"primary": good}
    assert "charging" in results[1]["text"] and "id" in results[3]["text"]


def test_borrowed_schemas_become_one_component_each_named_after_where_they_were():
    from typed_mcp.spec.bundle import hoist_borrowed  # here: the old code had no such function

    spec = borrowed_refs_spec()
    paths = spec["paths"]
    # Written otherwise (`{` unescaped), the same target: one component. A chain through an
    # operation's ref to a component ends at the component; a name already taken gets a hash.
    paths["/again"] = _get("getAgain", {"$ref": VEHICLE.replace("%7B", "{").replace("%7D", "}")})
    paths["/chain"] = _get("getChain", {"$ref": "#/paths/~1fleet/get/responses/200/content/application~1json/schema"})
    spec["components"]["schemas"]["GetFleetLimit"] = {"type": "string"}
    before = json.dumps(spec)
    hoist_borrowed(spec)
    schemas = spec["components"]["schemas"]
    # In the order they are first referred to.
    hoisted = ["GetVehicleResponseBattery", "GetFleetLimit_67d9cc", "GetVehicleResponse"]
    assert list(schemas) == ["Fleet", "GetFleetLimit", *hoisted]
    answer = paths["/vehicles/{vehicleId}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": COMPONENT + "GetVehicleResponse"}
    for path in ("/primary", "/again"):
        assert paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == answer
    assert schemas["Fleet"]["properties"]["primary"] == answer
    chain = paths["/chain"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert chain == {"$ref": COMPONENT + "Fleet"}
    assert schemas["GetVehicleResponse"]["properties"]["previous"] == {"$ref": COMPONENT + "GetVehicleResponseBattery"}
    assert schemas["GetVehicleResponse"]["properties"]["battery"] == {"$ref": COMPONENT + "GetVehicleResponseBattery"}
    assert paths["/primary"]["get"]["parameters"][0]["schema"] == {"$ref": COMPONENT + "GetFleetLimit_67d9cc"}
    again = json.loads(before)
    hoist_borrowed(again)
    assert json.dumps(again) == json.dumps(spec)  # the same spec, the same document
