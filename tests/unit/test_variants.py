"""readOnly properties leave request inputs, writeOnly properties leave outputs, at every depth."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from support import REPO, generate, import_server

# Each test generates its package with the CLI (a process).
pytestmark = pytest.mark.slow


def listed_tools(out, module: str) -> dict:
    """The tools a generated package's server lists to a real client, by name."""

    async def tools():
        async with Client(import_server(out, module)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(tools)


def test_read_only_and_write_only_views(tmp_path):
    out = tmp_path / "rw"
    generate(REPO / "tests" / "data" / "readonly.json", out, "rw-views")

    listed = listed_tools(out, "rw_views")
    create = listed["create_pet"]
    body = create.input_schema["$defs"]["PetRequest"]
    assert "id" not in body["properties"] and body["required"] == ["name", "password"]
    owner_in = create.input_schema["$defs"]["OwnerRequest"]
    assert "oid" not in owner_in["properties"]  # nested readOnly removed too
    output = create.output_schema
    assert "password" not in output["properties"] and output["required"] == ["id", "name"]
    assert "oid" in output["$defs"]["OwnerResponse"]["properties"]
    assert output["$defs"]["OwnerResponse"]["properties"]["pets"]["anyOf"][0]["items"] == {
        "$ref": "#/$defs/PetResponse"
    }
    listing = listed["list_pets"].output_schema
    assert listing["properties"]["result"]["items"] == {"$ref": "#/$defs/PetResponse"}
    import importlib

    models = importlib.import_module("rw_views.models")
    # A schema without such properties stays one shared class, not renamed into views.
    assert "Plain" in models.__all__ and not {"PlainRequest", "PlainResponse"} & set(models.__all__)
    assert listed["plain"].output_schema == models.Plain.model_json_schema()


def test_path_parameters_are_never_null(tmp_path):
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "p", "version": "1"},
        "paths": {
            "/t/{a}/{b}": {
                "get": {
                    "operationId": "get_t",
                    "parameters": [
                        {"name": "a", "in": "path", "required": True, "schema": {}},
                        {"name": "b", "in": "path", "required": True, "schema": {"type": ["integer", "null"]}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "p"
    generate(spec, out, "path-params")

    properties = next(iter(listed_tools(out, "path_params").values())).input_schema["properties"]
    assert properties["a"]["type"] == "string" and properties["b"]["type"] == "integer"


def test_a_property_narrowed_in_allof_is_the_intersection(tmp_path):
    """Cloudflare's envelopes: a base says `result: anyOf [object, string], nullable`, the schema
    extending it says `result: {type: object}`. Both apply, so `result` is any object; the model
    generator alone made it a map whose values must be objects, strings or null."""
    import importlib
    import json

    from pydantic import ValidationError

    schemas = {
        "common": {
            "type": "object",
            "required": ["success", "result"],
            "properties": {
                "success": {"type": "boolean", "enum": [True]},
                "result": {"anyOf": [{"type": "object"}, {"type": "array", "items": {}}, {"type": "string"}]},
            },
        },
        "single": {
            "type": "object",
            "allOf": [
                {"$ref": "#/components/schemas/common"},
                {"properties": {"result": {"anyOf": [{"type": "object"}, {"type": "string"}], "nullable": True}}},
            ],
        },
        "app": {
            "allOf": [
                {"$ref": "#/components/schemas/single"},
                {"type": "object", "properties": {"result": {"type": "object"}}},
            ]
        },
        # GitHub's webhook-fork: `created_at: oneOf [date-time string, integer]` narrowed to a string.
        "repo": {
            "type": "object",
            "properties": {"created_at": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]}},
        },
        "fork": {
            "allOf": [
                {"$ref": "#/components/schemas/repo"},
                {"type": "object", "properties": {"created_at": {"type": "string"}}},
            ]
        },
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "n", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/app": {
                "get": {
                    "operationId": "get_app",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/app"}}},
                        }
                    },
                }
            },
            "/fork": {
                "get": {
                    "operationId": "get_fork",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/fork"}}},
                        }
                    },
                }
            },
        },
    }
    out = tmp_path / "n"
    generate(spec, out, "narrowed")
    import_server(out, "narrowed")
    models = importlib.import_module("narrowed.models")
    app = models.App.model_validate_json(
        json.dumps({"success": True, "result": {"id": 1, "tags": ["a"], "on": None}}), strict=True
    )
    assert app.result == {"id": 1, "tags": ["a"], "on": None}
    for refused in ("text", None):  # an object, and only an object, satisfies both parts
        try:
            models.App.model_validate_json(json.dumps({"success": True, "result": refused}), strict=True)
        except ValidationError:
            continue
        raise AssertionError(f"result {refused!r} was accepted")
    models.Fork.model_validate_json('{"created_at": "2024-01-01T00:00:00Z"}', strict=True)
    try:
        models.Fork.model_validate_json('{"created_at": 1700000000}', strict=True)
    except ValidationError:
        pass
    else:
        raise AssertionError("an integer created_at was accepted where the fork narrows it to a string")


def test_a_default_its_own_schema_refuses_is_dropped(tmp_path):
    """Cloudflare's `logpush_kind`: `enum: [edge]`, nullable, `default: ""`. Models validate defaults,
    so every call leaving the field out failed. And its deprecated `logpush_frequency` became a
    RootModel pydantic could not even build (AttributeError: root)."""
    import importlib

    job = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["edge"], "nullable": True, "default": ""},
            "frequency": {"type": "string", "enum": ["high", "low"], "default": "high"},
            "limit": {"type": "integer", "default": "ten"},
            "speed": {"$ref": "#/components/schemas/speed"},
        },
    }
    # Cloudflare's logpush_frequency: a deprecated enum component, a RootModel pydantic could not build.
    speed = {
        "type": "string",
        "enum": ["high", "low"],
        "default": "high",
        "deprecated": True,
        "description": "Deprecated.",
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "d", "version": "1"},
        "components": {"schemas": {"job": job, "speed": speed}},
        "paths": {
            "/jobs": {
                "post": {
                    "operationId": "create_job",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/job"}}}},
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/job"}}},
                        }
                    },
                }
            }
        },
    }
    out = tmp_path / "d"
    generate(spec, out, "defaults")
    import_server(out, "defaults")
    job_model = importlib.import_module("defaults.models").Job
    made = job_model.model_validate({})
    assert made.kind is None and made.limit is None and made.frequency == "high"  # a default the schema admits stays
    assert made.speed.root == "high" and job_model.model_validate({"speed": "low"}).speed.root == "low"


def test_schemas_the_code_generator_misreads_are_repaired(tmp_path):
    """Each case broke real tools: a model stricter than its spec, or a schema a client refuses."""
    import importlib
    import json

    from jsonschema import Draft202012Validator

    schemas = {
        # Cloudflare: maxLength on an array means nothing; the model made `errors` always empty.
        "envelope": {
            "type": "object",
            "properties": {
                "errors": {"type": "array", "items": {"type": "string"}, "maxLength": 0},
                "token": {"type": "string", "pattern": "^(?<id>[a-z0-9]{4}):(?<path>.*)$"},
            },
        },
        # OpenAI: `allOf: [X, {nullable: true}]` became an object-only model, refusing "auto".
        "choice": {"oneOf": [{"type": "string", "enum": ["none", "auto"]}, {"$ref": "#/components/schemas/named"}]},
        "named": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
        "run": {
            "type": "object",
            "required": ["tool_choice"],
            "properties": {"tool_choice": {"allOf": [{"$ref": "#/components/schemas/choice"}, {"nullable": True}]}},
        },
        # GitHub: a discriminator made `private-user` require `user_view_type`, also where it is used alone.
        "private-user": {
            "type": "object",
            "required": ["login"],
            "properties": {"login": {"type": "string"}, "user_view_type": {"type": "string"}},
        },
        "public-user": {
            "type": "object",
            "required": ["login"],
            "properties": {"login": {"type": "string"}, "user_view_type": {"type": "string"}},
        },
        "any-user": {
            "oneOf": [{"$ref": "#/components/schemas/private-user"}, {"$ref": "#/components/schemas/public-user"}],
            "discriminator": {
                "propertyName": "user_view_type",
                "mapping": {
                    "private": "#/components/schemas/private-user",
                    "public": "#/components/schemas/public-user",
                },
            },
        },
    }

    def get(op_id, name):
        return {
            "get": {
                "operationId": op_id,
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}},
                    }
                },
            }
        }

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "r", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/envelope": get("get_envelope", "envelope"),
            "/run": get("get_run", "run"),
            "/user": get("update_user", "private-user"),
            "/users/any": get("get_any_user", "any-user"),
        },
    }
    out = tmp_path / "r"
    generate(spec, out, "repaired")

    tools = listed_tools(out, "repaired")
    models = importlib.import_module("repaired.models")
    models.Envelope.model_validate_json(json.dumps({"errors": ["boom"], "token": "ab12:x"}), strict=True)
    token = tools["get_envelope"].output_schema["properties"]["token"]
    assert "(?<" not in json.dumps(token) and "pattern" in json.dumps(token)
    for tool in tools.values():  # what the MCP Python SDK's client checks before it validates a result
        Draft202012Validator.check_schema(tool.output_schema)
        Draft202012Validator(tool.output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for choice in ("auto", {"type": "file_search"}, None):
        models.Run.model_validate_json(json.dumps({"tool_choice": choice}), strict=True)
    models.PrivateUser.model_validate_json('{"login": "octocat"}', strict=True)  # no user_view_type: the spec allows it


def test_property_counts_are_published_and_checked(tmp_path, monkeypatch):
    """Cloudflare's rule `action_parameters`: an object with declared properties and `minProperties: 1`.
    The code generator drops the count, so `{}` was published as valid and sent; Prism refused it.
    Now clients are told, and the server refuses `{}` before any request, and in answers."""
    import importlib

    from support import HttpServer, Reply

    counted = {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 2,
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
    }
    schemas = {
        "Rule": {
            "type": "object",
            "required": ["action_parameters"],
            "properties": {
                "action_parameters": counted,
                "PropertyCount": {"$ref": "#/components/schemas/PropertyCount"},
                "tags": {"type": "object", "minProperties": 1},
            },
        },
        # A schema named like the runtime's class: imported under another name.
        "PropertyCount": {"type": "object", "properties": {"n": {"type": "integer"}}, "minProperties": 1},
    }
    body = {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Rule"}}}}
    ok = {
        "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Rule"}}}}
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "c", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {"/rules": {"post": {"operationId": "create_rule", "requestBody": body, "responses": ok}}},
    }
    out = tmp_path / "c"
    generate(spec, out, "counted")

    with HttpServer() as upstream:
        upstream.routes["/rules"] = lambda seen: Reply(200, json.loads(seen.body))  # echoes the body
        monkeypatch.setenv("COUNTED_BASE_URL", upstream.url)

        async def run():
            async with Client(import_server(out, "counted")) as client:
                tool = (await client.list_tools()).tools[0]
                calls = [
                    await client.call_tool("create_rule", {"body": b})
                    for b in (
                        {"action_parameters": {}},
                        {"action_parameters": {"a": "x", "b": 1, "c": 2}},
                        {"action_parameters": {"a": "x"}, "PropertyCount": {}},
                        {"action_parameters": {"a": "x"}, "tags": {}},
                        {"action_parameters": {"a": "x", "z": True}, "PropertyCount": {"n": 1}},
                    )
                ]
                return tool, calls

        tool, calls = anyio.run(run)
        sent = [json.loads(seen.body) for seen in upstream.seen]

    defs = tool.input_schema["$defs"]
    rule = defs["Rule"]["properties"]
    params = defs[rule["action_parameters"]["$ref"].split("/")[-1]]
    assert (params["minProperties"], params["maxProperties"]) == (1, 2) and "title" not in params
    # The schema named like the runtime's PropertyCount keeps its constraint under the name it was
    # given (names the generated code imports are reserved: it is renamed).
    named = next(value for key, value in defs.items() if key.startswith("PropertyCount"))
    assert named["minProperties"] == 1 and rule["tags"]["anyOf"][0]["minProperties"] == 1
    assert tool.output_schema["$defs"][rule["action_parameters"]["$ref"].split("/")[-1]]["minProperties"] == 1
    refused, too_many, empty_named, empty_map, fine = calls
    # Refused by the inputSchema check (before the argument model's CountedModel, which says the same).
    assert (
        refused.is_error
        and "body.action_parameters: {} should be non-empty (minProperties: 1)" in refused.content[0].text
    )
    assert too_many.is_error and "body.action_parameters" in too_many.content[0].text
    assert "(maxProperties: 2)" in too_many.content[0].text
    assert empty_named.is_error and empty_map.is_error
    assert not fine.is_error and fine.structured_content["action_parameters"] == {"a": "x", "z": True}
    assert sent == [
        {"action_parameters": {"a": "x", "z": True}, "PropertyCount": {"n": 1}}
    ]  # refused calls never went out
    models = importlib.import_module("counted.models")
    with pytest.raises(ValueError, match="at least 1 property"):
        models.Rule.model_validate({"action_parameters": {}})  # an answer with `{}` is refused too


def test_the_url_format_is_published_as_a_uri(tmp_path):
    """Box's `format: url` (outside JSON Schema) was published as a bare string, so nothing told a
    caller; Prism, whose formats know `url`, refused "abc". It is a `uri` now (published, like every
    `uri`, as `uri-reference`, see generator/typed_mcp/models/rewrite.py)."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "u", "version": "1"},
        "paths": {
            "/token": {
                "post": {
                    "operationId": "token",
                    "requestBody": {
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"resource": {"type": "string", "format": "url"}},
                                }
                            }
                        }
                    },
                    "responses": {"204": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "u"
    generate(spec, out, "url-format")

    (body,) = next(iter(listed_tools(out, "url_format").values())).input_schema["$defs"].values()
    assert body["properties"]["resource"]["anyOf"][0] == {"type": "string", "format": "uri-reference"}


def test_a_parameter_schema_in_all_of_parts_keeps_its_type(tmp_path):
    """Cloudflare's `region`: `allOf: [{$ref: an enum}, {default: us-central1}]`, published as any
    value, so callers (and the synthesized calls) sent what the API refuses."""
    region = {"type": "string", "enum": ["asia-east1", "us-central1"], "description": "A test region."}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "a", "version": "1"},
        "components": {"schemas": {"region": region}},
        "paths": {
            "/tests": {
                "get": {
                    "operationId": "list_tests",
                    "parameters": [
                        {
                            "name": "region",
                            "in": "query",
                            "schema": {"allOf": [{"$ref": "#/components/schemas/region"}, {"default": "us-central1"}]},
                        }
                    ],
                    "responses": {"204": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "a"
    generate(spec, out, "all-of-param")

    region = next(iter(listed_tools(out, "all_of_param").values())).input_schema["properties"]["region"]
    assert region == {
        "default": "us-central1",
        "description": "A test region.",
        "title": "Region",
        "enum": ["asia-east1", "us-central1"],
        "type": "string",
    }


def test_a_typeless_parameter_with_string_keywords_is_a_string(tmp_path):
    """Cloudflare's `variant_id`: `{pattern: "^[a-zA-Z0-9]$", maxLength: 99}` without `type`. The
    pattern was dropped, so nothing told a caller (or the synthesized calls) what Prism checks."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/variants/{variant_id}": {
                "get": {
                    "operationId": "get_variant",
                    "parameters": [
                        {
                            "name": "variant_id",
                            "in": "path",
                            "required": True,
                            "schema": {"pattern": "^[a-zA-Z0-9]$", "maxLength": 99},
                        },
                        {"name": "q", "in": "query", "schema": {"minLength": 2}},
                    ],
                    "responses": {"204": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "t"
    generate(spec, out, "typeless")

    properties = next(iter(listed_tools(out, "typeless").values())).input_schema["properties"]
    assert properties["variant_id"]["pattern"] == "^[a-zA-Z0-9]$" and properties["variant_id"]["type"] == "string"
    assert properties["q"]["anyOf"][0] == {"minLength": 2, "type": "string"}


def test_required_beside_a_union_applies_to_its_branches(tmp_path):
    """Cloudflare's `zones_target`: `oneOf: [url_target], required: [target, constraint]`. The code
    generator dropped `required`, so `{}` was published as a valid target and sent; Prism refused it."""
    import importlib

    import pytest as _pytest

    schemas = {
        "url_target": {
            "type": "object",
            "properties": {
                "target": {"type": "string", "enum": ["url"]},
                "constraint": {"type": "object", "properties": {"value": {"type": "string"}}},
            },
        },
        "target": {
            "oneOf": [{"$ref": "#/components/schemas/url_target"}],
            "required": ["target", "constraint", "undeclared"],
        },
        "rule": {
            "type": "object",
            "properties": {
                "targets": {"type": "array", "items": {"$ref": "#/components/schemas/target"}},
                "plain": {"$ref": "#/components/schemas/url_target"},
            },
        },
    }
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/rule"}}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/rules": {
                "post": {"operationId": "create_rule", "requestBody": body, "responses": {"204": {"description": "ok"}}}
            }
        },
    }
    out = tmp_path / "t"
    generate(spec, out, "union-required")
    listed_tools(out, "union_required")
    models = importlib.import_module("union_required.models")
    rule = models.Rule.model_validate({"targets": [{"target": "url", "constraint": {"value": "x"}}], "plain": {}})
    assert rule.plain is not None  # the component used alone keeps its optional properties
    with _pytest.raises(ValueError, match="constraint"):
        models.Rule.model_validate({"targets": [{"target": "url"}]})


def _resolved(schema: dict, node: dict) -> dict:
    """`node` with its `$ref` into the tool schema's `$defs` followed."""
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_an_allof_part_that_adds_structure_to_a_bare_inherited_property_keeps_it(tmp_path):
    """Cloudflare's envelopes: `allOf: [api-response-collection, {properties: {result: {items: ...}}}]`
    over a base's `result: {type: array, items: {}}` came out as `list[Any]`; its Zaraz config body's
    `tools` map, over a base that only requires `tools`, came out as `Any`: the code generator keeps
    the inherited type when a part declares a property again. Both are published, and checked, with
    the structure the spec gives them; the base used alone stays as loose as it is."""
    import importlib

    from pydantic import ValidationError

    item = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    schemas = {
        "envelope": {
            "type": "object",
            "properties": {"result": {"type": "array", "items": {}, "nullable": True}},
            "required": ["tools"],
        },
        "item": item,
        "listing": {
            "allOf": [
                {"$ref": "#/components/schemas/envelope"},
                {
                    "properties": {
                        "result": {"type": "array", "items": {"$ref": "#/components/schemas/item"}},
                        "tools": {
                            "type": "object",
                            "description": "by id",
                            "additionalProperties": {"$ref": "#/components/schemas/item"},
                        },
                    }
                },
            ]
        },
    }
    ok = {
        "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/listing"}}},
        }
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/items": {"get": {"operationId": "list_items", "responses": ok}},
            "/envelope": {
                "get": {
                    "operationId": "get_envelope",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/envelope"}}},
                        }
                    },
                }
            },
        },
    }
    out = tmp_path / "t"
    generate(spec, out, "bare-override")
    output = listed_tools(out, "bare_override")["list_items"].output_schema
    properties = _resolved(output, output)["properties"]
    result = next(b for b in properties["result"]["anyOf"] if b.get("type") == "array")
    assert _resolved(output, result["items"])["required"] == ["id"]
    assert _resolved(output, properties["tools"]["additionalProperties"])["required"] == ["id"]
    assert "tools" in _resolved(output, output)["required"]
    assert "x-typed-mcp" not in json.dumps(output)  # the repair's marker is not published

    models = importlib.import_module("bare_override.models")
    models.Listing.model_validate({"result": [{"id": 1, "extra": True}], "tools": {"a": {"id": 2}}})
    for wrong, field in (
        ({"result": [{}], "tools": {}}, "result.0.id"),
        ({"tools": "text"}, "tools"),
        ({"tools": {"a": {}}}, "tools.a.id"),
    ):
        with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
            models.Listing.model_validate(wrong)
    models.Envelope.model_validate({"result": [1, "x"], "tools": "anything"})  # the base alone is as loose as the spec
    from typed_mcp.spec.repairs import _override

    # Types that do not meet, or a child wider than its parent, are no narrowing: left as they are.
    assert _override({"type": "array", "items": {}}, {"type": "object", "properties": {}}, lambda ref: {}) is None
    assert _override({"type": "integer"}, {"type": "number", "allOf": []}, lambda ref: {}) is None
    assert _override({"type": "number"}, {"type": "integer", "allOf": []}, lambda ref: {}) is not None


def test_a_typeless_schema_with_one_kind_of_keywords_has_that_type(tmp_path):
    """Cloudflare's `images_image_variant_identifier: {pattern: "^[a-zA-Z0-9]$", maxLength: 99}`, a
    body property: made `Any`, so its pattern was neither published nor checked and a tool sent
    `"abc"`, which Prism refused. Keywords of one type (string, number) give the schema that type;
    mixed or none leave it as it is."""
    schemas = {
        "body": {
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"pattern": "^[a-z]$", "maxLength": 9},
                "page": {"minimum": 1},
                "free": {"description": "anything"},
                "mixed": {"minimum": 1, "maxLength": 3},
            },
        }
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/v": {
                "post": {
                    "operationId": "create_variant",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/body"}}},
                    },
                    "responses": {"204": {"description": "ok"}},
                }
            }
        },
    }
    out = tmp_path / "t"
    generate(spec, out, "implied")
    tool = listed_tools(out, "implied")["create_variant"]
    body = _resolved(tool.input_schema, tool.input_schema["properties"]["body"])["properties"]
    assert body["id"] == {"maxLength": 9, "pattern": "^[a-z]$", "type": "string"}
    given = {
        name: next(b for b in body[name]["anyOf"] if b.get("type") != "null") for name in ("page", "free", "mixed")
    }
    assert given["page"] == {"minimum": 1.0, "type": "number"}
    assert "type" not in given["free"] and "type" not in given["mixed"]

    async def call(arguments):
        async with Client(import_server(out, "implied")) as client:
            return await client.call_tool("create_variant", arguments)

    refused = anyio.run(call, {"body": {"id": "abc"}})
    assert refused.is_error and "id" in refused.content[0].text and "pattern" in refused.content[0].text


def test_views_follow_long_chains_and_cycles_of_references():
    """Stripe's resources refer to each other in chains hundreds of schemas long: deciding whether a
    view differs walks them without recursion, and a cycle never hides a property further on."""
    from typed_mcp.plan.variants import Views
    from typed_mcp.spec.normalize import Document

    count = 3000
    schemas = {
        f"S{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}}}
        for i in range(count)
    }
    schemas[f"S{count}"] = {"type": "object", "properties": {"secret": {"type": "string", "writeOnly": True}}}
    # A -> B -> A, and only A reaches the writeOnly property: B's view differs too.
    schemas["A"] = {"properties": {"b": {"$ref": "#/components/schemas/B"}, "c": {"$ref": "#/components/schemas/S0"}}}
    schemas["B"] = {"properties": {"a": {"$ref": "#/components/schemas/A"}}}
    doc = Document(data={"components": {"schemas": schemas}}, origin="t", version="3.0.0")
    views = Views(doc, set(schemas))
    assert views._has({"$ref": "#/components/schemas/A"}, "writeOnly")
    assert views._has({"$ref": "#/components/schemas/B"}, "writeOnly")
    assert not views._has({"$ref": "#/components/schemas/A"}, "readOnly")
    assert views.view({"$ref": "#/components/schemas/S0"}, "request") == {"$ref": "#/components/schemas/S0"}


def test_properties_named_like_keywords_and_the_default_response_are_schemas_too(tmp_path):
    """A property named `default` or `enum` is a schema like any other, and so is the `default`
    response's: its readOnly fields leave the request, and a field it requires without declaring is
    declared (the walkers once skipped such keys everywhere, as if they held data)."""
    inner = {
        "type": "object",
        "properties": {"id": {"type": "string", "readOnly": True}, "name": {"type": "string"}},
        "required": ["name", "label"],
    }
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "k", "version": "1"},
        "paths": {
            "/settings": {
                "post": {
                    "operationId": "create_settings",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Settings"}}},
                    },
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Settings"}}},
                        }
                    },
                }
            },
            "/things": {
                "get": {
                    "operationId": "list_things",
                    "responses": {
                        "default": {
                            "description": "the things",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"id": {"type": "string"}},
                                        "required": ["id", "kind"],
                                    }
                                }
                            },
                        }
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Settings": {
                    "type": "object",
                    "properties": {"default": inner, "enum": {"type": "string"}},
                    "required": ["default"],
                }
            }
        },
    }
    out = tmp_path / "k"
    generate(spec, out, "keyword-names")
    listed = listed_tools(out, "keyword_names")

    create = listed["create_settings"]
    sent = create.input_schema["$defs"]["SettingsRequestDefault"]  # the request's view of `default`
    assert "id" not in sent["properties"], sent  # readOnly, under a property named `default`
    assert "label" in sent["properties"] and "label" in sent["required"], sent
    answered = create.output_schema["$defs"]["SettingsDefault"]
    assert {"id", "label"} <= set(answered["properties"]) and "label" in answered["required"], answered

    things = listed["list_things"].output_schema
    assert "kind" in things["properties"] and things["required"] == ["id", "kind"], things
