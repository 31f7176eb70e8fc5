"""typed_mcp.spec.swagger2: Swagger 2.0 -> OpenAPI 3.0.3, on small hand-written documents and on the shared corpus."""

from __future__ import annotations

import copy
import csv
import functools
import json
from collections import Counter
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from support import CORPUS  # noqa: E402
from typed_mcp.spec.swagger2 import ConversionError, convert

SWAGGER_DOCS = [
    "kubernetes__swagger-1.13.json",
    "netlify__swagger.yml",
    "oai__v2.0-petstore.json",
    "oai__v2.0-petstore-expanded.yaml",
    "oai__v2.0-petstore-separate/spec/swagger.yaml",
]
SMALL_DOCS = SWAGGER_DOCS[1:]  # kubernetes validates too, but takes seconds
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
LEGACY_PREFIXES = ("#/definitions/", "#/parameters/", "#/responses/")


# --- helpers -----------------------------------------------------------------------------------


def swagger(paths: dict | None = None, **top: Any) -> dict:
    return {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": paths or {}, **top}


def op(**fields: Any) -> dict:
    return {"responses": {"200": {"description": "ok"}}, **fields}


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs(value)]
    return []


def resolve(doc: dict, ref: str) -> Any:
    node: Any = doc
    for token in unquote(ref[2:]).split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def operations(doc: dict) -> dict[str, dict]:
    return {
        f"{method} {path}": operation
        for path, item in doc["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def by_id(doc: dict, operation_id: str) -> dict:
    (found,) = [o for o in operations(doc).values() if o.get("operationId") == operation_id]
    return found


@functools.cache
def _read(name: str) -> dict:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


def corpus(name: str) -> dict:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus {CORPUS} is absent")
    return _read(name)  # cached: callers must not modify it


@functools.cache
def _converted(name: str) -> dict:
    return convert(_read(name))


def converted(name: str) -> dict:
    corpus(name)
    return _converted(name)


# --- small documents ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "url"),
    [
        ({"host": "api.example.com", "basePath": "/v2", "schemes": ["http", "https"]}, "https://api.example.com/v2"),
        ({"host": "api.example.com", "schemes": ["http", "ws"]}, "http://api.example.com"),
        ({"host": "api.example.com:8080", "basePath": "/v2"}, "https://api.example.com:8080/v2"),
        ({"basePath": "/v2", "schemes": ["http"]}, "/v2"),
        ({}, "/"),
    ],
)
def test_servers(top, url):
    assert convert(swagger(**top))["servers"] == [{"url": url}]


def test_top_level_fields_are_copied():
    doc = swagger(tags=[{"name": "a"}], externalDocs={"url": "https://docs"}, security=[{"k": []}], **{"x-logo": 1})
    out = convert(doc)
    assert out["openapi"] == "3.0.3"
    assert "swagger" not in out
    assert (out["info"], out["tags"], out["externalDocs"]) == (doc["info"], doc["tags"], doc["externalDocs"])
    assert out["security"] == [{"k": []}] and out["x-logo"] == 1


def test_body_parameter_becomes_request_body_for_each_consumed_media_type():
    body = {
        "name": "pet",
        "in": "body",
        "required": True,
        "description": "the pet",
        "schema": {"$ref": "#/definitions/Pet"},
    }
    doc = swagger({"/pets": {"post": op(parameters=[body], consumes=["application/json", "application/xml"])}})
    request = convert(doc)["paths"]["/pets"]["post"]["requestBody"]
    assert request["description"] == "the pet" and request["required"] is True
    assert request["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}},
        "application/xml": {"schema": {"$ref": "#/components/schemas/Pet"}},
    }
    assert "parameters" not in convert(doc)["paths"]["/pets"]["post"]


def test_body_media_types_fall_back_to_global_consumes_then_json():
    body = {"name": "b", "in": "body", "schema": {"type": "string"}}
    doc = swagger({"/a": {"post": op(parameters=[body])}}, consumes=["text/plain"])
    assert list(convert(doc)["paths"]["/a"]["post"]["requestBody"]["content"]) == ["text/plain"]
    del doc["consumes"]
    request = convert(doc)["paths"]["/a"]["post"]["requestBody"]
    assert list(request["content"]) == ["application/json"] and "required" not in request


def test_body_parameter_without_schema_gets_an_empty_schema():
    doc = swagger({"/a": {"post": op(parameters=[{"name": "b", "in": "body"}])}})
    assert convert(doc)["paths"]["/a"]["post"]["requestBody"]["content"] == {"application/json": {"schema": {}}}


def test_global_parameters_split_into_parameters_and_request_bodies():
    doc = swagger(
        {"/a": {"post": op(parameters=[{"$ref": "#/parameters/limit"}, {"$ref": "#/parameters/Body"}])}},
        parameters={
            "limit": {"name": "limit", "in": "query", "type": "integer", "maximum": 10},
            "Body": {"name": "body", "in": "body", "required": True, "schema": {"$ref": "#/definitions/Thing"}},
        },
    )
    out = convert(doc)
    operation = out["paths"]["/a"]["post"]
    assert operation["parameters"] == [{"$ref": "#/components/parameters/limit"}]
    assert operation["requestBody"] == {"$ref": "#/components/requestBodies/Body"}
    assert out["components"]["parameters"]["limit"] == {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "maximum": 10},
    }
    assert out["components"]["requestBodies"]["Body"]["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}
    }


def test_global_body_is_inlined_when_the_operation_consumes_other_media_types():
    doc = swagger(
        {"/a": {"post": op(parameters=[{"$ref": "#/parameters/Body"}], consumes=["text/csv"])}},
        parameters={"Body": {"name": "body", "in": "body", "schema": {"type": "string"}}},
    )
    request = convert(doc)["paths"]["/a"]["post"]["requestBody"]
    assert request["content"] == {"text/csv": {"schema": {"type": "string"}}}


def test_form_data_becomes_an_urlencoded_object():
    fields = [
        {"name": "name", "in": "formData", "type": "string", "required": True, "description": "who"},
        {"name": "age", "in": "formData", "type": "integer", "minimum": 0},
        {"name": "ids", "in": "formData", "type": "array", "items": {"type": "integer"}},
        {"name": "q", "in": "query", "type": "string"},
    ]
    operation = convert(swagger({"/a": {"post": op(parameters=fields)}}))["paths"]["/a"]["post"]
    assert [p["name"] for p in operation["parameters"]] == ["q"]
    assert operation["requestBody"]["required"] is True
    form = operation["requestBody"]["content"]["application/x-www-form-urlencoded"]
    assert form["schema"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "who"},
            "age": {"type": "integer", "minimum": 0},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["name"],
    }
    # 2.0's default collectionFormat is csv, which 3.0 spells as non-exploded form.
    assert form["encoding"] == {"ids": {"style": "form", "explode": False}}


def test_form_data_with_a_file_is_multipart():
    fields = [
        {"name": "upload", "in": "formData", "type": "file"},
        {"name": "note", "in": "formData", "type": "string"},
    ]
    request = convert(swagger({"/a": {"post": op(parameters=fields)}}))["paths"]["/a"]["post"]["requestBody"]
    assert list(request["content"]) == ["multipart/form-data"] and "required" not in request
    schema = request["content"]["multipart/form-data"]["schema"]
    assert schema["properties"]["upload"] == {"type": "string", "format": "binary"}


def test_form_data_follows_consumes_multipart():
    fields = [{"name": "note", "in": "formData", "type": "string"}]
    doc = swagger({"/a": {"post": op(parameters=fields, consumes=["multipart/form-data"])}})
    assert list(convert(doc)["paths"]["/a"]["post"]["requestBody"]["content"]) == ["multipart/form-data"]


def test_non_body_parameter_type_keywords_move_into_schema():
    param = {
        "name": "size",
        "in": "query",
        "description": "d",
        "required": False,
        "allowEmptyValue": True,
        "type": "integer",
        "format": "int32",
        "default": 5,
        "minimum": 1,
        "exclusiveMinimum": True,
        "maximum": 9,
        "exclusiveMaximum": False,
        "multipleOf": 2,
        "enum": [2, 4],
        "x-nullable": True,
        "x-vendor": "v",
    }
    (out,) = convert(swagger({"/a": {"get": op(parameters=[param])}}))["paths"]["/a"]["get"]["parameters"]
    assert out == {
        "name": "size",
        "in": "query",
        "description": "d",
        "required": False,
        "allowEmptyValue": True,
        "x-vendor": "v",
        "schema": {
            "type": "integer",
            "format": "int32",
            "default": 5,
            "minimum": 1,
            "exclusiveMinimum": True,
            "maximum": 9,
            "exclusiveMaximum": False,
            "multipleOf": 2,
            "enum": [2, 4],
            "nullable": True,
        },
    }


@pytest.mark.parametrize(
    ("where", "collection_format", "style", "explode"),
    [
        ("query", "csv", "form", False),
        ("query", None, "form", False),
        ("query", "ssv", "spaceDelimited", False),
        ("query", "pipes", "pipeDelimited", False),
        ("query", "tsv", "form", False),
        ("query", "multi", "form", True),
        ("path", "csv", "simple", False),
        ("header", "csv", "simple", False),
    ],
)
def test_collection_format_becomes_style_and_explode(where, collection_format, style, explode):
    param = {"name": "ids", "in": where, "required": True, "type": "array", "items": {"type": "string", "maxLength": 3}}
    if collection_format:
        param["collectionFormat"] = collection_format
    (out,) = convert(swagger({"/a/{ids}": {"get": op(parameters=[param])}}))["paths"]["/a/{ids}"]["get"]["parameters"]
    assert (out["style"], out["explode"]) == (style, explode)
    assert out["schema"] == {"type": "array", "items": {"type": "string", "maxLength": 3}}


def test_nested_items_lose_their_collection_format():
    param = {
        "name": "m",
        "in": "query",
        "type": "array",
        "collectionFormat": "pipes",
        "items": {"type": "array", "collectionFormat": "csv", "items": {"type": "integer"}},
    }
    (out,) = convert(swagger({"/a": {"get": op(parameters=[param])}}))["paths"]["/a"]["get"]["parameters"]
    assert out["schema"] == {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
    assert out["style"] == "pipeDelimited"


def test_path_parameters_are_always_required():
    param = {"name": "id", "in": "path", "type": "string"}
    (out,) = convert(swagger({"/a/{id}": {"get": op(parameters=[param])}}))["paths"]["/a/{id}"]["get"]["parameters"]
    assert out["required"] is True


def test_path_level_parameters_merge_and_the_operation_overrides():
    item = {
        "parameters": [
            {"name": "id", "in": "path", "required": True, "type": "string"},
            {"name": "v", "in": "query", "type": "string", "description": "path-level"},
            {"name": "v", "in": "header", "type": "string"},
        ],
        "get": op(parameters=[{"name": "v", "in": "query", "type": "integer", "description": "operation-level"}]),
        "x-item": True,
    }
    out = convert(swagger({"/a/{id}": item}))["paths"]["/a/{id}"]
    params = {(p["name"], p["in"]): p for p in out["get"]["parameters"]}
    assert set(params) == {("id", "path"), ("v", "query"), ("v", "header")}
    assert params[("v", "query")]["schema"] == {"type": "integer"}
    assert params[("v", "query")]["description"] == "operation-level"
    assert "parameters" not in out and out["x-item"] is True


def test_responses_get_content_per_produced_media_type_with_examples_and_headers():
    response = {
        "description": "ok",
        "schema": {"$ref": "#/definitions/Pet"},
        "examples": {"application/json": {"id": 1}},
        "headers": {"X-Rate": {"type": "integer", "format": "int32", "description": "calls left"}},
        "x-r": 1,
    }
    operation = op(produces=["application/json", "application/xml"])
    operation["responses"] = {"200": response, "204": {"description": "none"}}
    out = convert(swagger({"/a": {"get": operation}}))["paths"]["/a"]["get"]["responses"]
    pet = {"$ref": "#/components/schemas/Pet"}
    assert out["200"] == {
        "description": "ok",
        "headers": {"X-Rate": {"description": "calls left", "schema": {"type": "integer", "format": "int32"}}},
        "content": {"application/json": {"schema": pet, "example": {"id": 1}}, "application/xml": {"schema": pet}},
        "x-r": 1,
    }
    assert out["204"] == {"description": "none"}


def test_integer_status_codes_from_yaml_become_strings():
    operation = {"responses": {200: {"description": "ok", "schema": {"type": "file"}}}}
    out = convert(swagger({"/a": {"get": operation}}))["paths"]["/a"]["get"]["responses"]
    assert out == {
        "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"type": "string", "format": "binary"}}},
        }
    }


def test_schemas_convert_at_every_depth():
    definitions = {
        "Pet": {
            "type": "object",
            "discriminator": "kind",
            "required": ["kind"],
            "properties": {
                "kind": {"type": "string", "readOnly": True, "example": "cat"},
                "photo": {"type": "file"},
                "tags": {"type": "array", "items": {"type": "string", "x-nullable": True}},
                "extra": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Tag", "x-nullable": False}},
                "flag": {"type": "object", "additionalProperties": True},
                "owner": {"$ref": "#/definitions/Owner", "x-nullable": True},
            },
        },
        "Cat": {"allOf": [{"$ref": "#/definitions/Pet"}, {"not": {"type": "file"}}], "x-kind": "cat"},
    }
    schemas = convert(swagger(definitions=definitions))["components"]["schemas"]
    pet = schemas["Pet"]
    assert pet["discriminator"] == {"propertyName": "kind"}
    assert pet["properties"]["kind"] == {"type": "string", "readOnly": True, "example": "cat"}
    assert pet["properties"]["photo"] == {"type": "string", "format": "binary"}
    assert pet["properties"]["tags"]["items"] == {"type": "string", "nullable": True}
    assert pet["properties"]["extra"]["additionalProperties"] == {"$ref": "#/components/schemas/Tag"}
    assert pet["properties"]["flag"]["additionalProperties"] is True
    # 3.0 ignores siblings of $ref, so nullability must wrap the reference.
    assert pet["properties"]["owner"] == {"allOf": [{"$ref": "#/components/schemas/Owner"}], "nullable": True}
    assert schemas["Cat"] == {
        "allOf": [{"$ref": "#/components/schemas/Pet"}, {"not": {"type": "string", "format": "binary"}}],
        "x-kind": "cat",
    }


def test_refs_keep_pointer_escaping_and_external_refs_stay():
    definitions = {
        "a/b~c": {"type": "string"},
        "Holder": {
            "properties": {
                "local": {"$ref": "#/definitions/a~1b~0c"},
                "other": {"$ref": "common.yaml#/definitions/Error"},
                "url": {"$ref": "https://example.com/s.json"},
            }
        },
    }
    out = convert(swagger(definitions=definitions))
    props = out["components"]["schemas"]["Holder"]["properties"]
    assert props["local"] == {"$ref": "#/components/schemas/a~1b~0c"}
    assert resolve(out, props["local"]["$ref"]) == {"type": "string"}
    assert props["other"] == {"$ref": "common.yaml#/definitions/Error"}
    assert props["url"] == {"$ref": "https://example.com/s.json"}


def test_global_responses_and_response_refs():
    doc = swagger(
        {"/a": {"get": {"responses": {"default": {"$ref": "#/responses/Err"}}}}},
        responses={"Err": {"description": "bad", "schema": {"$ref": "#/definitions/Error"}}},
        produces=["application/problem+json"],
    )
    out = convert(doc)
    assert out["paths"]["/a"]["get"]["responses"]["default"] == {"$ref": "#/components/responses/Err"}
    assert out["components"]["responses"]["Err"]["content"] == {
        "application/problem+json": {"schema": {"$ref": "#/components/schemas/Error"}}
    }


def test_security_definitions():
    definitions = {
        "basic": {"type": "basic", "description": "user:pass"},
        "key": {"type": "apiKey", "name": "X-Key", "in": "header"},
        "implicit": {"type": "oauth2", "flow": "implicit", "authorizationUrl": "https://a", "scopes": {"r": "read"}},
        "password": {"type": "oauth2", "flow": "password", "tokenUrl": "https://t"},
        "app": {"type": "oauth2", "flow": "application", "tokenUrl": "https://t", "scopes": {}},
        "code": {"type": "oauth2", "flow": "accessCode", "authorizationUrl": "https://a", "tokenUrl": "https://t"},
    }
    schemes = convert(swagger(securityDefinitions=definitions))["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": "user:pass"}
    assert schemes["key"] == definitions["key"]
    assert schemes["implicit"]["flows"] == {"implicit": {"authorizationUrl": "https://a", "scopes": {"r": "read"}}}
    assert schemes["password"]["flows"] == {"password": {"tokenUrl": "https://t", "scopes": {}}}
    assert schemes["app"]["flows"] == {"clientCredentials": {"tokenUrl": "https://t", "scopes": {}}}
    assert schemes["code"]["flows"] == {
        "authorizationCode": {"authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {}}
    }


def test_operation_metadata_is_kept():
    operation = op(
        operationId="doIt",
        summary="s",
        description="d",
        tags=["t"],
        deprecated=True,
        security=[{"key": []}],
        schemes=["https"],
        consumes=["application/json"],
        **{"x-internal": True},
    )
    out = convert(swagger({"/a": {"get": operation}}))["paths"]["/a"]["get"]
    for key in ("operationId", "summary", "description", "tags", "deprecated", "security", "x-internal"):
        assert out[key] == operation[key]
    assert not {"schemes", "consumes", "produces"} & set(out)


def test_operation_schemes_that_differ_become_operation_servers():
    doc = swagger(
        {"/a": {"get": op(schemes=["wss"])}, "/b": {"get": op(schemes=["https"])}}, host="h", schemes=["https"]
    )
    paths = convert(doc)["paths"]
    assert paths["/a"]["get"]["servers"] == [{"url": "wss://h"}]
    assert "servers" not in paths["/b"]["get"]


def test_the_input_is_not_mutated():
    doc = swagger(
        {
            "/a/{id}": {
                "parameters": [{"name": "id", "in": "path", "type": "string"}],
                "post": op(parameters=[{"name": "f", "in": "formData", "type": "file"}]),
            }
        },
        definitions={
            "D": {"type": "object", "x-nullable": True, "discriminator": "k", "properties": {"f": {"type": "file"}}}
        },
        securityDefinitions={"b": {"type": "basic"}},
    )
    before = copy.deepcopy(doc)
    out = convert(doc)
    assert doc == before
    out["components"]["schemas"]["D"]["properties"]["f"]["format"] = "changed"
    assert doc == before


@pytest.mark.parametrize(
    ("doc", "pointer"),
    [
        ({"swagger": "2.0", "info": {}, "paths": []}, "#/paths"),
        ({"swagger": "2.0", "info": {}}, "#/paths"),
        ({"openapi": "3.0.0", "info": {}, "paths": {}}, "#/swagger"),
        (swagger({"/a": {"get": "nope"}}), "#/paths/~1a/get"),
        (swagger({"/a": {"get": op(parameters={"name": "x"})}}), "#/paths/~1a/get/parameters"),
        (
            swagger({"/a": {"get": op(parameters=[{"$ref": "#/parameters/missing"}])}}),
            "#/paths/~1a/get/parameters/0/$ref",
        ),
        (swagger({"/a": {"get": op(parameters=[{"in": "query"}])}}), "#/paths/~1a/get/parameters/0"),
        (
            swagger(
                {
                    "/a": {
                        "get": op(parameters=[{"name": "x", "in": "query", "type": "array", "collectionFormat": "odd"}])
                    }
                }
            ),
            "#/paths/~1a/get/parameters/0/collectionFormat",
        ),
        (
            swagger({"/a": {"post": op(parameters=[{"name": "a", "in": "body"}, {"name": "b", "in": "body"}])}}),
            "#/paths/~1a/post/parameters/1",
        ),
        (swagger({"/a": {"get": {"operationId": "x"}}}), "#/paths/~1a/get/responses"),
        (swagger(securityDefinitions={"s": {"type": "digest"}}), "#/securityDefinitions/s/type"),
    ],
)
def test_structurally_broken_input_raises_with_a_pointer(doc, pointer):
    with pytest.raises(ConversionError) as caught:
        convert(doc)
    assert caught.value.pointer == pointer
    assert str(caught.value).startswith(f"{pointer}: ")


def test_schemas_of_the_wrong_shape_pass_through_for_the_shape_checks():
    """A schema's shape is spec/shapes.py's to judge (for 2.0 and 3.x alike): converted inside, kept."""
    definitions = {"D": {"properties": {"p": "string", "q": {"items": [{"$ref": "#/definitions/E"}]}}}, "E": 5}
    out = convert(swagger(definitions=definitions))["components"]["schemas"]
    assert out["D"]["properties"] == {"p": "string", "q": {"items": [{"$ref": "#/components/schemas/E"}]}}
    assert out["E"] == 5


def test_a_broken_operation_or_shared_definition_costs_only_the_operations_it_reaches():
    doc = swagger(
        {
            "/a": {"get": op(parameters=[{"in": "query"}]), "post": op()},
            "/b": {"get": op(parameters=[{"$ref": "#/parameters/bad"}], operationId="b", tags=["t"])},
            "/c": {"get": op(responses={"200": {"$ref": "#/responses/bad"}})},
        },
        parameters={"bad": {"in": "query", "name": 3}},
        responses={"bad": "nope"},
        securityDefinitions={"s": {"type": "digest"}},
    )
    unusable, notes = {}, []
    out = convert(doc, unusable=unusable, notes=notes)
    assert unusable == {
        "GET /a": "#/paths/~1a/get/parameters/0: parameter needs a string 'name'",
        "GET /b": "#/parameters/bad: parameter needs a string 'name'",
    }
    assert out["paths"]["/a"]["get"] == {} and out["paths"]["/b"]["get"] == {"operationId": "b", "tags": ["t"]}
    assert out["paths"]["/a"]["post"]["responses"] and out["paths"]["/c"]["get"]["responses"]
    assert notes == [
        "#/responses/bad: must be an object, got str: left out",
        "#/securityDefinitions/s/type: unknown security scheme type 'digest': left out",
    ]


# --- the shared corpus -------------------------------------------------------------------------


@pytest.mark.parametrize("name", SWAGGER_DOCS)
def test_corpus_refs_are_rewritten_and_internal_ones_resolve(name):
    out = converted(name)
    assert out["openapi"] == "3.0.3" and "swagger" not in out
    found = refs(out)
    assert found
    assert not [ref for ref in found if ref.startswith(LEGACY_PREFIXES)]
    for ref in found:
        if ref.startswith("#"):
            resolve(out, ref)  # raises KeyError when dangling
    # References to other files are another module's business: exactly the same ones remain.
    external = Counter(ref for ref in refs(corpus(name)) if not ref.startswith("#"))
    assert Counter(ref for ref in found if not ref.startswith("#")) == external


@pytest.mark.parametrize("name", SWAGGER_DOCS)
def test_corpus_operation_count_is_unchanged(name):
    source = corpus(name)
    with open(CORPUS / "index.tsv", encoding="utf-8") as index:
        expected = {row["file"]: int(row["operations"]) for row in csv.DictReader(index, delimiter="\t")}
    assert len(operations(source)) == len(operations(converted(name))) == expected[name]


@pytest.mark.parametrize("name", SMALL_DOCS)
def test_corpus_conversion_is_valid_openapi_3_0(name):
    validator = pytest.importorskip("openapi_spec_validator", reason="openapi-spec-validator is not installed")
    # The base URI lets the validator follow the separate petstore's references to its sibling files.
    validator.validate(converted(name), base_uri=(CORPUS / name).as_uri())


def test_corpus_conversion_does_not_mutate_the_input():
    fresh = json.loads(json.dumps(corpus("netlify__swagger.yml")))
    convert(fresh)
    assert fresh == corpus("netlify__swagger.yml")


def test_kubernetes_body_and_merged_path_parameters():
    out = converted("kubernetes__swagger-1.13.json")
    create = by_id(out, "createCoreV1Namespace")
    assert create["requestBody"]["required"] is True
    assert create["requestBody"]["content"] == {
        "*/*": {"schema": {"$ref": "#/components/schemas/io.k8s.api.core.v1.Namespace"}}
    }
    # The path item's `pretty` parameter is merged in next to the operation's own `dryRun`.
    assert {p["name"] for p in create["parameters"]} == {"dryRun", "includeUninitialized", "pretty"}
    assert "body" not in {p["name"] for p in create["parameters"]}
    assert list(create["responses"]["201"]["content"]) == [
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
    ]
    assert "content" not in create["responses"]["401"]
    assert create["x-kubernetes-action"] == "post"
    read = by_id(out, "readCoreV1Namespace")
    assert {p["name"]: p["required"] for p in read["parameters"] if p["in"] == "path"} == {"name": True}
    assert out["servers"] == [{"url": "/"}]
    assert out["components"]["securitySchemes"]["BearerToken"] == {
        "description": "Bearer Token authentication",
        "type": "apiKey",
        "name": "authorization",
        "in": "header",
    }


def test_netlify_form_upload_becomes_a_multipart_request_body():
    build = by_id(converted("netlify__swagger.yml"), "createSiteBuild")
    assert [p["in"] for p in build["parameters"]] == ["path", "query", "query", "query", "query", "query"]
    (media_type,) = build["requestBody"]["content"]
    assert media_type == "multipart/form-data"
    schema = build["requestBody"]["content"][media_type]["schema"]
    assert schema["type"] == "object" and "required" not in schema
    assert schema["properties"]["zip"]["type"] == "string"
    assert schema["properties"]["zip"]["format"] == "binary"
    assert schema["properties"]["zip"]["description"].startswith("A zip file")


def test_netlify_binary_body_global_parameters_responses_and_nullable():
    out = converted("netlify__swagger.yml")
    upload = by_id(out, "uploadDeployFile")
    assert upload["requestBody"]["content"] == {
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
    }
    assert {"$ref": "#/components/parameters/page"} in by_id(out, "listSites")["parameters"]
    assert upload["responses"]["default"] == {"$ref": "#/components/responses/error"}
    components = out["components"]
    assert components["parameters"]["perPage"] == {
        "name": "per_page",
        "required": False,
        "in": "query",
        "schema": {"type": "integer", "format": "int32"},
    }
    assert components["responses"]["error"]["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/error"}}
    }
    settings = components["schemas"]["databaseComputeSettingsRequest"]["properties"]
    assert settings["min_cu"]["nullable"] is True and "x-nullable" not in settings["min_cu"]
    assert "x-nullable" not in json.dumps(out)
    assert components["securitySchemes"]["netlifyAuth"] == {
        "type": "oauth2",
        "flows": {"implicit": {"authorizationUrl": "https://app.netlify.com/authorize", "scopes": {}}},
    }
    assert out["servers"] == [{"url": "https://api.netlify.com/api/v1"}]
    assert out["x-tagGroups"] == corpus("netlify__swagger.yml")["x-tagGroups"]


def test_petstore_server_and_response_headers():
    out = converted("oai__v2.0-petstore.json")
    assert out["servers"] == [{"url": "http://petstore.swagger.io/v1"}]
    ok = by_id(out, "listPets")["responses"]["200"]
    assert ok["headers"] == {
        "x-next": {"description": "A link to the next page of responses", "schema": {"type": "string"}}
    }
    assert ok["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/Pets"}}}
    assert "requestBody" not in by_id(out, "createPets")
    (pet_id,) = by_id(out, "showPetById")["parameters"]
    assert pet_id["in"] == "path" and pet_id["required"] is True and pet_id["schema"] == {"type": "string"}


def test_petstore_expanded_csv_query_parameter_and_body():
    out = converted("oai__v2.0-petstore-expanded.yaml")
    assert out["servers"] == [{"url": "http://petstore.swagger.io/api"}]
    tags = by_id(out, "findPets")["parameters"][0]
    assert tags["name"] == "tags" and (tags["style"], tags["explode"]) == ("form", False)
    assert tags["schema"] == {"type": "array", "items": {"type": "string"}}
    body = by_id(out, "addPet")["requestBody"]
    assert body["required"] is True
    assert body["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}
    assert "content" not in by_id(out, "deletePet")["responses"]["204"]


def test_petstore_separate_keeps_its_external_refs():
    out = converted("oai__v2.0-petstore-separate/spec/swagger.yaml")
    find = by_id(out, "findPets")
    assert find["parameters"] == [{"$ref": "parameters.yaml#/tagsParam"}, {"$ref": "parameters.yaml#/limitsParam"}]
    assert find["responses"]["default"]["content"]["application/json"]["schema"] == {"$ref": "../common/Error.yaml"}
    assert by_id(out, "addPet")["requestBody"]["content"] == {"application/json": {"schema": {"$ref": "NewPet.yaml"}}}
