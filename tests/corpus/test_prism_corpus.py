"""Issue 4 on every CI run: each small corpus spec's tools, called through the strict TypeScript
MCP client against Prism (a mock server built from the same spec, validating every request), and
for the specs of at most 50 operations again through the 2.x line on 2026-07-28 over streamable
HTTP (CI time; every spec through every strict client pass: `make corpus`)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
from test_corpus import SMALL, size_marks

from harness import corpus, ref_root_args
from harness.node_tools import TS2_MODERN
from harness.strict_run import strict_run_against_prism
from support import CORPUS, REPO, generate

pytestmark = pytest.mark.needs("node")

SECOND_LINE = 50  # operations: up to this, the 2.x pass runs in CI too


def specs():
    if not CORPUS.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [
        pytest.param(path, int(meta["operations"]), id=meta["file"], marks=size_marks(meta))
        for path, meta in corpus.discover(CORPUS)
        if int(meta["size_bytes"].split()[0]) <= SMALL and meta["operations"] != "0"
    ]


@pytest.mark.parametrize(("path", "operations"), specs())
def test_every_tool_against_prism(path, operations, tmp_path):
    name = "prism-" + path.name.split(".")[0].replace("_", "-")[:30].lower()
    out = tmp_path / name
    generate(path, out, name, "--no-verify", *ref_root_args(path))
    module = json.loads((out / "typed-mcp.json").read_text())["module"]
    sys.path.insert(0, str(out / "src"))
    api = importlib.import_module(f"{module}.upstream").api
    credentials = {var: "prism-credential" for scheme in api.schemes.values() for var in scheme.env}
    passes = ((TS2_MODERN, "http"),) if operations <= SECOND_LINE else ()
    run = strict_run_against_prism(path, out / "src", module, credentials, timeout=900, passes=passes)
    print(
        f"{path.name}: {run['tools']} tools, {run['ok']} ok, {len(run['prism_cannot_answer'])} Prism cannot answer, "
        f"{len(run['off_spec'])} answers the spec itself refuses, {len(run['email_format'])} email-format refusals, "
        f"{len(run['request_violations'])} request violations"
    )
    assert run["schema_failures"] == []  # the strict client's AJV compiles every inputSchema and outputSchema
    assert run["schemas_compiled"] == run["listed"] + run["outputs"]
    assert run["protocol_errors"] == [] and run["raised"] == []  # no -32602 / -32600 from the strict client
    assert run["request_violations"] == []  # every request was valid for the spec
    # The MCP Python SDK's Client, given the same calls, refuses nothing and sees the same outcomes.
    assert run["python_refused"] == [] and run["python_disagrees"] == []
    # The 2.x line (AJV 2020-12) on 2026-07-28 over HTTP: every schema compiles, nothing refused, same outcomes.
    assert run["strict_passes"] == (["ts2-2026-07-28-http"] if passes else [])
    assert [run[f"strict_{k}"] for k in ("refused", "schema_failures", "listed_differs", "disagrees")] == [[]] * 4
    assert run["other_errors"] == []
    # Every answer the server refused is refused by the spec's own response schema too (Prism serves
    # the spec's examples, which can be wrong): the server is never stricter than the spec.
    assert run["model_stricter"] == []
    explained = sum(
        len(run[k]) for k in ("prism_cannot_answer", "off_spec", "email_format", "transport_failures", "beyond_budget")
    )
    assert run["ok"] + explained == run["tools"] == run["listed"]
    assert run["ok"] >= 0.7 * run["tools"] or len(run["prism_cannot_answer"]) == run["tools"]


def test_a_refused_answer_is_judged_against_the_spec_itself(tmp_path):
    """The judge that tells off-spec answers from a model stricter than the spec can say both."""
    from harness.strict_run import Exchange, judge_answer

    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/pets/{id}": {
                        "get": {
                            "responses": {
                                "200": {
                                    "description": "ok",
                                    "content": {
                                        "application/json": {
                                            "schema": {
                                                "type": "object",
                                                "required": ["id"],
                                                "properties": {
                                                    "id": {"type": "integer"},
                                                    "at": {"type": "string", "format": "date-time"},
                                                    "mail": {"type": "string", "format": "email"},
                                                },
                                            }
                                        }
                                    },
                                }
                            }
                        }
                    }
                },
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(json.dumps({"tools": {"get_pet": "GET /pets/{id}"}}))
    result = {
        "name": "get_pet",
        "text": "upstream response does not match Pet: ...",
        "meta": {
            "io.github.typed-mcp/source": {"method": "GET", "url": "http://127.0.0.1:1/pets/7?x=1", "status": 200}
        },
    }

    def judged(body: bytes) -> str:
        return judge_answer(spec, tmp_path, result, [Exchange("GET", "/pets/7?x=1", 200, "application/json", body)])

    assert judged(b'{"id": "seven"}').startswith("off-spec: at id: 'seven' is not of type 'integer'")
    assert judged(b'{"id": 7, "at": "2024-01-01T00:00:00"}').startswith("off-spec: at at:")  # no timezone: not RFC 3339
    assert judged(b'{"id": 7, "mail": "ann@localhost"}').startswith(
        "off-spec: at mail:"
    )  # as strict clients check `email`
    assert judged(b'{"id": 7, "at": "2024-01-01T00:00:00Z", "mail": "ann@example.com"}').startswith(
        "model stricter than the spec: upstream"
    )
    assert judge_answer(spec, tmp_path, result, []).startswith("not judged")


def test_only_prisms_form_array_limitation_is_put_apart():
    from harness.node_tools import prism_violations
    from harness.strict_run import Exchange, split_form_array_violations

    log = "\n".join(
        [
            "[8:17:24 AM] › [HTTP SERVER] post /f ℹ  info      Request received",
            "[8:17:24 AM] ›     [VALIDATOR] ✖  error     Request body property Ev must be array",
            "[8:17:24 AM] ›     [VALIDATOR] ✖  error     Request body property N must be integer",
            "[8:17:25 AM] › [HTTP SERVER] post /j ℹ  info      Request received",
            "[8:17:25 AM] ›     [VALIDATOR] ✖  error     Request body property Ev must be array",
        ]
    )
    violations = prism_violations(log)
    assert [v["request"] for v in violations] == ["POST /f", "POST /f", "POST /j"]
    exchanges = [
        Exchange("POST", "/f", 422, "application/json", b"{}", "application/x-www-form-urlencoded", b"Ev=a&N=1"),
        Exchange("POST", "/j", 422, "application/json", b"{}", "application/json", b'{"Ev": "a"}'),
    ]
    kept, limitation = split_form_array_violations(violations, exchanges)
    assert [v["message"] for v in limitation] == ["Request body property Ev must be array"]
    assert [(v["request"], v["message"]) for v in kept] == [
        ("POST /f", "Request body property N must be integer"),
        ("POST /j", "Request body property Ev must be array"),
    ]


def test_only_a_body_several_one_of_branches_accept_is_put_apart(tmp_path):
    from harness.strict_run import Exchange, split_ambiguous_one_of

    # Zoom's lock settings: two branches without `type` whose properties are all optional.
    lock = {"oneOf": [{"properties": {"a": {"type": "boolean"}}}, {"properties": {"b": {"type": "object"}}}]}
    strict = {
        "type": "object",
        "properties": {
            "configuration": {
                "oneOf": [
                    {"type": "object", "required": ["a"], "properties": {"a": {"type": "boolean"}}},
                    {"type": "string"},
                ]
            }
        },
    }

    def op(schema):
        return {
            "patch": {
                "requestBody": {"content": {"application/json": {"schema": schema}}},
                "responses": {"204": {"description": "ok"}},
            }
        }

    # Box's taxonomy sources: items of an array, `oneOf` two objects whose properties are all optional.
    sources = {
        "type": "object",
        "properties": {"sources": {"type": "array", "items": {"$ref": "#/components/schemas/source"}}},
    }
    source = {
        "type": "object",
        "oneOf": [{"properties": {"type": {"enum": ["taxonomy"]}}}, {"properties": {"type": {"enum": ["file"]}}}],
    }

    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "components": {"schemas": {"source": source}},
                "paths": {"/lock/{id}": op(lock), "/fine": op(strict), "/sources": op(sources)},
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(
        json.dumps({"tools": {"lock": "PATCH /lock/{id}", "fine": "PATCH /fine", "sources": "PATCH /sources"}})
    )
    results = [
        {"name": name, "meta": {"io.github.typed-mcp/source": {"method": "PATCH", "url": f"http://h{path}"}}}
        for name, path in (("lock", "/lock/1"), ("fine", "/fine"), ("sources", "/sources"))
    ]
    sent = [
        Exchange("PATCH", "/lock/1", 422, "application/json", b"{}", "application/json", b'{"a": true, "b": {}}'),
        Exchange("PATCH", "/fine", 422, "application/json", b"{}", "application/json", b'{"configuration": 5}'),
        Exchange(
            "PATCH",
            "/sources",
            422,
            "application/json",
            b"{}",
            "application/json",
            b'{"sources": [{"type": "file"}, {}, {"type": "x"}]}',
        ),
    ]
    violations = [
        {"message": "Request body must match exactly one schema in oneOf", "request": "PATCH /lock/1"},
        {
            "message": "Request body property sources.1 must match exactly one schema in oneOf",
            "request": "PATCH /sources",
        },
        {
            "message": "Request body property configuration must match exactly one schema in oneOf",
            "request": "PATCH /fine",
        },
        {"message": "Request body property a must be boolean", "request": "PATCH /lock/1"},
        {
            "message": "Request body property sources.2 must match exactly one schema in oneOf",
            "request": "PATCH /sources",
        },
        {
            "message": "Request body property sources.7 must match exactly one schema in oneOf",
            "request": "PATCH /sources",
        },
    ]
    kept, apart = split_ambiguous_one_of(violations, results, sent, spec, tmp_path)
    # The lock body and the second source are valid for both branches (the spec's fault); 5 and the
    # third source are valid for none (that would be ours); there is no eighth source.
    assert apart == violations[:2] and kept == violations[2:]


def test_an_array_query_parameter_inside_any_of_is_prisms_limitation():
    from harness.strict_run import Exchange, split_form_array_violations

    request = "PATCH /api/v2/connections/abc"
    violations = [
        {"message": f"Request query parameter update_mask must {what}", "request": request}
        for what in ("be array", "be null", "match a schema in anyOf")
    ]
    violations.append({"message": "Request query parameter limit must be integer", "request": request})
    sent = [Exchange("PATCH", "/api/v2/connections/abc?update_mask=abc&limit=x", 422, "application/json", b"{}")]
    kept, limitation = split_form_array_violations(violations, sent)
    assert limitation == violations[:3] and kept == violations[3:]
    assert split_form_array_violations(violations, [])[0] == violations  # not sent as pairs: nothing is put apart


def test_only_a_read_only_property_prism_requires_is_put_apart(tmp_path):
    from harness.strict_run import split_read_only_required

    rule = {
        "type": "object",
        "required": ["version", "action"],
        "properties": {"version": {"type": "string", "readOnly": True}, "action": {"type": "string"}},
    }
    body = {
        "type": "object",
        "properties": {"rules": {"type": "array", "items": {"$ref": "#/components/schemas/rule"}}},
    }
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "components": {"schemas": {"rule": rule}},
                "paths": {
                    "/rulesets": {
                        "post": {
                            "requestBody": {"content": {"application/json": {"schema": body}}},
                            "responses": {"204": {"description": "ok"}},
                        }
                    }
                },
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(json.dumps({"tools": {"create": "POST /rulesets"}}))
    results = [
        {"name": "create", "meta": {"io.github.typed-mcp/source": {"method": "POST", "url": "http://h/rulesets"}}}
    ]
    violations = [
        {"message": "Request body property rules.0 must have required property 'version'", "request": "POST /rulesets"},
        {"message": "Request body property rules.0 must have required property 'action'", "request": "POST /rulesets"},
    ]
    kept, apart = split_read_only_required(violations, results, spec, tmp_path)
    assert apart == violations[:1] and kept == violations[1:]  # `action` is not readOnly: leaving it out would be ours


def test_a_read_only_property_is_found_through_unions_and_nested_all_of(tmp_path):
    """Cloudflare's rulesets: the rule is `allOf` inside `allOf`, the rules array's items a `oneOf`."""
    from harness.strict_run import split_read_only_required

    base = {"type": "object", "required": ["version"], "properties": {"version": {"type": "string", "readOnly": True}}}
    rule = {
        "allOf": [{"allOf": [{"$ref": "#/components/schemas/base"}]}, {"properties": {"action": {"type": "string"}}}]
    }
    body = {
        "allOf": [
            {"$ref": "#/components/schemas/rule"},
            {
                "properties": {
                    "rules": {
                        "type": "array",
                        "items": {"oneOf": [{"$ref": "#/components/schemas/rule"}, {"type": "string"}]},
                    }
                }
            },
        ]
    }
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "components": {"schemas": {"base": base, "rule": rule}},
                "paths": {
                    "/r": {
                        "put": {
                            "requestBody": {"content": {"application/json": {"schema": body}}},
                            "responses": {"204": {"description": "ok"}},
                        }
                    }
                },
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(json.dumps({"tools": {"put_r": "PUT /r"}}))
    results = [{"name": "put_r", "meta": {"io.github.typed-mcp/source": {"method": "PUT", "url": "http://h/r"}}}]
    violations = [
        {"message": "Request body must have required property 'version'", "request": "PUT /r"},
        {"message": "Request body property rules.0 must have required property 'version'", "request": "PUT /r"},
        {"message": "Request body property rules.0 must have required property 'action'", "request": "PUT /r"},
    ]
    kept, apart = split_read_only_required(violations, results, spec, tmp_path)
    assert apart == violations[:2] and kept == violations[2:]


def test_a_json_part_of_a_multipart_body_is_prisms_limitation():
    """Prism keeps every multipart part as text: an object sent as a JSON part (OpenAPI's default
    for an object property) reads as a string there. Only such a part is put apart."""
    from harness.strict_run import Exchange, split_form_array_violations

    src = str(REPO / "generated" / "weather-mcp" / "src")
    sys.path.insert(0, src)
    try:
        runtime = importlib.import_module("weather_mcp._runtime")  # the generated runtime encodes the body
    finally:
        sys.path.remove(src)
    body, content_type = runtime.encode_multipart(
        {
            "file": b"data",
            "expires_after": {"anchor": "created_at", "seconds": 3600},
            "purpose": "batch",
            "ranges": [{"from": 1}],
        }
    )
    sent = [Exchange("POST", "/files", 422, "application/json", b"{}", content_type, body)]
    violations = [
        {"message": f"Request body property {name} must be {what}", "request": "POST /files"}
        for name, what in (
            ("expires_after", "object"),
            ("ranges", "array"),
            ("purpose", "object"),
            ("missing", "object"),
        )
    ]
    kept, limitation = split_form_array_violations(violations, sent)
    assert limitation == violations[:2] and kept == violations[2:]  # text parts and absent ones stay violations
    as_json = [
        Exchange("POST", "/files", 422, "application/json", b"{}", "application/json", b'{"expires_after": "x"}')
    ]
    assert split_form_array_violations(violations[:1], as_json)[0] == violations[:1]


def test_an_array_of_files_sent_as_one_part_is_prisms_limitation():
    """Cloudflare's worker upload: a multipart property `<any part name>` (spaces in its name), an
    array of files. One file goes as one part, which Prism reads as a string ("must be array"). The
    log line is read whole (the location holds spaces too), and only a part that was sent is put apart."""
    from harness.node_tools import prism_violations
    from harness.strict_run import Exchange, split_form_array_violations

    src = str(REPO / "generated" / "weather-mcp" / "src")
    sys.path.insert(0, src)
    try:
        runtime = importlib.import_module("weather_mcp._runtime")
    finally:
        sys.path.remove(src)
    body, content_type = runtime.encode_multipart({"<any part name>": [b"export default {}"]})
    log = "\n".join(
        [
            "[3:46:36 PM] › [HTTP SERVER] put /content ℹ  info      Request received",
            "[3:46:36 PM] ›     [VALIDATOR] ✖  error     Violation: request.body.<any part name> Request body property <any part name> must be array",
            "[3:46:36 PM] ›     [VALIDATOR] ✖  error     Violation: request.body.other part Request body property other part must be array",
            "[3:46:36 PM] ›     [VALIDATOR] ✖  error     Violation: request Supported content types: application/octet-stream",
        ]
    )
    violations = prism_violations(log)
    assert [(v["location"], v["message"]) for v in violations] == [
        ("request.body.<any part name>", "Request body property <any part name> must be array"),
        ("request.body.other part", "Request body property other part must be array"),
        ("request", "Supported content types: application/octet-stream"),
    ]  # Docker's: no "Request" to start at
    kept, limitation = split_form_array_violations(
        violations, [Exchange("PUT", "/content", 422, "application/json", b"{}", content_type, body)]
    )
    assert limitation == violations[:1] and kept == violations[1:]


def test_only_what_the_spec_itself_makes_unsatisfiable_is_put_apart(tmp_path):
    from harness.strict_run import Exchange, split_unsatisfiable

    def op(parameters=(), body=None, media="application/json"):
        operation = {"parameters": list(parameters), "responses": {"204": {"description": "ok"}}}
        if body is not None:
            operation["requestBody"] = {"content": {media: {"schema": body}}}
        return operation

    form = {
        "type": "object",
        "properties": {
            "sources": {"type": "array", "enum": ["github", "git"], "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["x", "y"]},
        },
    }
    paths = {
        "/sip/{tspId}": {
            "get": op(
                [
                    {"name": "tspId", "in": "path", "required": True, "schema": {"type": "string", "enum": [1, 2]}},
                    {"name": "kind", "in": "query", "schema": {"type": "string", "enum": ["a", "b"]}},
                    # Cloudflare's `ssl` and `retry`: no type, no string among the values
                    {"name": "ssl", "in": "query", "schema": {"enum": [0, 1], "default": "0"}},
                    {"name": "retry", "in": "query", "schema": {"enum": [True]}},
                    {"name": "level", "in": "query", "schema": {"enum": [1, 2]}},
                    {"name": "tag", "in": "query", "schema": {"enum": ["a", 1]}},
                ]
            )
        },
        "/settings": {"put": op(body=form, media="application/x-www-form-urlencoded")},
        "/connect": {
            "post": op(
                body={"type": "object", "properties": {"Container": {"type": "string"}}},
                media="application/octet-stream",
            )
        },
        "/create": {"post": op(body={"type": "object", "properties": {"Name": {"type": "string"}}})},
        "/build": {
            "post": op(
                [{"name": "Content-type", "in": "header", "schema": {"type": "string", "enum": ["application/x-tar"]}}],
                body={"type": "string", "format": "binary"},
                media="application/octet-stream",
            )
        },
        "/load": {"post": op(body={"type": "string", "format": "binary"}, media="application/octet-stream")},
    }
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths}))
    tools = {
        "sip": "GET /sip/{tspId}",
        "settings": "PUT /settings",
        "connect": "POST /connect",
        "create": "POST /create",
        "build": "POST /build",
        "load": "POST /load",
    }
    (tmp_path / "typed-mcp.json").write_text(json.dumps({"tools": tools}))
    results = [
        {
            "name": name,
            "meta": {
                "io.github.typed-mcp/source": {
                    "method": op.split()[0],
                    "url": "http://h" + op.split()[1].replace("{tspId}", "1"),
                }
            },
        }
        for name, op in tools.items()
    ]
    sent = [
        Exchange("GET", "/sip/1?kind=c&ssl=0&retry=true&level=3&tag=1", 422, "application/json", b"{}"),
        Exchange(
            "PUT",
            "/settings",
            422,
            "application/json",
            b"{}",
            "application/x-www-form-urlencoded",
            b"sources=git&mode=z",
        ),
        Exchange("POST", "/connect", 422, "application/json", b"{}", "application/octet-stream", b'{"Container": "c"}'),
        Exchange("POST", "/create", 422, "application/json", b"{}", "application/json", b"[]"),
        Exchange("POST", "/build", 422, "application/json", b"{}", "application/x-tar", b"tar"),
        Exchange("POST", "/load", 422, "application/json", b"{}", "application/x-tar", b"tar"),
    ]
    unsatisfiable = [
        {
            "message": "Request path parameter tspid must be equal to one of the allowed values: 1, 2",
            "request": "GET /sip/1",
        },
        {
            "message": "Request query parameter ssl must be equal to one of the allowed values: 0, 1",
            "request": "GET /sip/1",
        },
        {
            "message": "Request query parameter retry must be equal to one of the allowed values: true",
            "request": "GET /sip/1",
        },
        {
            "message": "Request body property sources must be equal to one of the allowed values: github, git",
            "request": "PUT /settings",
        },
        {"message": "Request body must be object", "request": "POST /connect"},
        {"message": "Supported content types: application/octet-stream", "request": "POST /build"},
    ]
    ours = [
        {
            "message": "Request query parameter kind must be equal to one of the allowed values: a, b",
            "request": "GET /sip/1",
        },
        {
            "message": "Request query parameter level must be equal to one of the allowed values: 1, 2",
            "request": "GET /sip/1",
        },  # 3 is ours
        {
            "message": "Request query parameter tag must be equal to one of the allowed values: a, 1",
            "request": "GET /sip/1",
        },  # "a" was possible
        {
            "message": "Request body property mode must be equal to one of the allowed values: x, y",
            "request": "PUT /settings",
        },
        {"message": "Request body must be object", "request": "POST /create"},
        {
            "message": "Supported content types: application/octet-stream",
            "request": "POST /load",
        },  # no header says x-tar
    ]
    kept, apart = split_unsatisfiable(ours + unsatisfiable, results, sent, spec, tmp_path)
    assert apart == unsatisfiable and kept == ours


def test_a_required_form_field_that_was_sent_is_prisms_limitation():
    """Prism's form reader keeps only the fields declared under `properties`: Box's revoke body lists
    `grant_type` in `required` only, so Prism calls it missing even when it was sent."""
    from harness.strict_run import Exchange, split_form_array_violations

    violations = [
        {"message": "Request body must have required property 'grant_type'", "request": "POST /oauth2/revoke"},
        {"message": "Request body must have required property 'token'", "request": "POST /oauth2/revoke"},
    ]
    sent = [
        Exchange(
            "POST",
            "/oauth2/revoke",
            400,
            "application/json",
            b"{}",
            "application/x-www-form-urlencoded",
            b"client_id=abc&grant_type=abc",
        )
    ]
    kept, limitation = split_form_array_violations(violations, sent)
    assert limitation == violations[:1] and kept == violations[1:]  # `token` was not sent: that one is ours
    as_json = [
        Exchange("POST", "/oauth2/revoke", 400, "application/json", b"{}", "application/json", b'{"grant_type": "abc"}')
    ]
    assert split_form_array_violations(violations, as_json)[0] == violations


def test_a_body_valid_the_openapi_way_is_judged_whole(tmp_path):
    """Cloudflare's rules: Prism requires the readOnly `version` and, the item failing its `oneOf`,
    lists every other branch's failure too. Valid with readOnly properties not required: all of
    the request's lines are Prism's. Valid only if a oneOf may match several branches: the spec's.
    Anything else stays a violation."""
    from harness.strict_run import Exchange, split_valid_bodies

    base = {
        "type": "object",
        "required": ["version", "action"],
        "properties": {
            "version": {"type": "string", "readOnly": True},
            "action": {"type": "string"},
            "action_parameters": {"type": "object"},
        },
    }
    rule = {
        "oneOf": [
            {"allOf": [{"$ref": "#/components/schemas/base"}, {"properties": {"action": {"enum": ["block"]}}}]},
            {
                "allOf": [
                    {"$ref": "#/components/schemas/base"},
                    {"properties": {"action": {"enum": ["skip"]}, "action_parameters": {"minProperties": 1}}},
                ]
            },
        ]
    }
    position = {
        "oneOf": [{"properties": {"before": {"type": "string"}}}, {"properties": {"after": {"type": "string"}}}]
    }
    body = {"type": "object", "properties": {"rules": {"type": "array", "items": rule}, "position": position}}

    def op(method):
        return {
            method: {
                "requestBody": {"content": {"application/json": {"schema": body}}},
                "responses": {"204": {"description": "ok"}},
            }
        }

    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "components": {"schemas": {"base": base}},
                "paths": {"/a": op("post"), "/b": op("post"), "/c": op("post"), "/d": op("post")},
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(json.dumps({"tools": {k: f"POST /{k}" for k in "abcd"}}))
    results = [
        {"name": k, "meta": {"io.github.typed-mcp/source": {"method": "POST", "url": f"http://h/{k}"}}} for k in "abcd"
    ]
    bodies = {
        "a": {"rules": [{"action": "block", "action_parameters": {}}]},  # readOnly only
        "b": {"rules": [{"action": "block"}], "position": {}},  # and a position both branches accept
        "c": {"rules": [{"action": "nope"}]},  # no branch: ours
        "d": {"rules": [{"action": "block", "action_parameters": []}]},
    }  # not an object: ours
    sent = [
        Exchange("POST", f"/{k}", 422, "application/json", b"{}", "application/json", json.dumps(v).encode())
        for k, v in bodies.items()
    ]
    lines = [
        "Request body property rules.0 must have required property 'version'",
        "Request body property rules.0.action must be equal to one of the allowed values: skip",
        "Request body property rules.0.action_parameters must NOT have fewer than 1 properties",
    ]
    violations = [{"message": line, "request": f"POST /{k}"} for k in "abcd" for line in lines]
    violations.append(
        {"message": "Request path parameter id must match exactly one schema in oneOf", "request": "POST /a"}
    )
    kept, read_only, overlap = split_valid_bodies(violations, results, sent, spec, tmp_path)
    assert {v["request"] for v in read_only} == {"POST /a"} and len(read_only) == 3
    assert {v["request"] for v in overlap} == {"POST /b"} and len(overlap) == 3
    assert {v["request"] for v in kept} == {"POST /c", "POST /d", "POST /a"}  # a path parameter is not the body


def test_a_path_parameter_several_one_of_branches_accept_is_put_apart(tmp_path):
    """Cloudflare's `app_id`: `oneOf` a string of at most 32 characters and one of at most 36."""
    from harness.strict_run import Exchange, split_ambiguous_one_of

    app_id = {"oneOf": [{"type": "string", "maxLength": 32}, {"type": "string", "maxLength": 36}]}
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/accounts/{account_id}/apps/{app_id}": {
                        "get": {
                            "parameters": [
                                {"name": "account_id", "in": "path", "required": True, "schema": {"type": "string"}},
                                {"name": "app_id", "in": "path", "required": True, "schema": app_id},
                            ],
                            "responses": {"204": {"description": "ok"}},
                        }
                    }
                },
            }
        )
    )
    (tmp_path / "typed-mcp.json").write_text(
        json.dumps({"tools": {"get_app": "GET /accounts/{account_id}/apps/{app_id}"}})
    )
    short, long = "/accounts/abc/apps/abc", "/accounts/abc/apps/" + "a" * 34
    results = [
        {"name": "get_app", "meta": {"io.github.typed-mcp/source": {"method": "GET", "url": f"http://h{path}"}}}
        for path in (short, long)
    ]
    sent = [Exchange("GET", f"{path}?x=1", 422, "application/json", b"{}") for path in (short, long)]
    violations = [
        {"message": "Request path parameter app_id must match exactly one schema in oneOf", "request": f"GET {path}"}
        for path in (short, long)
    ]
    kept, apart = split_ambiguous_one_of(violations, results, sent, spec, tmp_path)
    assert apart == violations[:1] and kept == violations[1:]  # "abc" matches both; 34 characters only the second


def test_an_operation_without_a_declared_success_is_one_prism_cannot_answer(tmp_path):
    """Kubernetes' `GET /logs/` declares only a 401: Prism can only answer that, so the tool's error
    is Prism's lack of an answer, not a failure of the call."""
    from harness.strict_run import _declares_success

    def op(*codes):
        return {"responses": {code: {"description": code} for code in codes}}

    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/logs/": {"get": op("401")},
                    "/a": {"get": op("2XX", "404")},
                    "/b": {"get": op("default")},
                    "/c": {"get": op("201", "401")},
                },
            }
        )
    )
    assert [_declares_success(spec, f"GET {p}") for p in ("/logs/", "/a", "/b", "/c")] == [False, True, True, True]
    assert _declares_success(spec, None)  # an unknown operation is not put apart


def test_only_a_violation_at_a_schema_budget_placeholder_is_put_apart():
    """Cloudflare's rulesets: the budget publishes a rule (a oneOf of 20 models) as an open placeholder,
    so the client sends `rules: [{}]`, which the spec's oneOf refuses. Put apart only where the
    published inputSchema shows a placeholder; a violation elsewhere in the same body stays."""
    from harness.strict_run import split_past_budget

    placeholder = {"type": "object", "description": "RulesetsRule (not expanded here)"}
    body = {"type": "object", "properties": {"name": {"type": "string"}, "rules": {"$ref": "#/$defs/Rules"}}}
    schema = {
        "type": "object",
        "properties": {"body": {"$ref": "#/$defs/Body"}},
        "$defs": {"Body": body, "Rules": {"anyOf": [{"type": "array", "items": placeholder}, {"type": "null"}]}},
    }
    tools = [{"name": "create_ruleset", "inputSchema": schema}]
    source = {"method": "POST", "url": "http://127.0.0.1:4010/rulesets"}
    results = [{"name": "create_ruleset", "isError": True, "meta": {"io.github.typed-mcp/source": source}}]
    at_rule = {
        "message": "Request body property rules.0 must match exactly one schema in oneOf",
        "request": "POST /rulesets",
    }
    at_name = {"message": "Request body property name must be string", "request": "POST /rulesets"}
    kept, past = split_past_budget([at_rule, at_name], results, tools)
    assert past == [at_rule] and kept == [at_name]
