"""Convert a Swagger 2.0 document to an equivalent OpenAPI 3.0.3 document.

`convert(doc)` takes the parsed Swagger document and returns a new dict; the input is never
mutated. Internal `$ref`s are rewritten to their OpenAPI 3 locations (JSON-pointer escaping is
kept as written); refs to other files are left alone, bundling them is another module's job.
Structurally broken input raises `ConversionError`, whose message starts with the JSON pointer
of the offending value. Given `unusable` (and `notes`), a broken operation costs only itself: its
reason is recorded under "METHOD /path" and the operation is left as a stub the plan skips, and a
broken shared parameter, response or security scheme only the operations that use it. Schemas are
converted as far as they have the expected shape and otherwise passed through (refs rewritten), for
spec/shapes.py to read or degrade, like any OpenAPI 3 schema.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from typed_mcp.pointer import join as _ptr  # here `pointer` names the place being read

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
DEFAULT_MEDIA_TYPE = "application/json"
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
# What describes a non-body parameter's or a header's value; OpenAPI 3 moves it into `schema`.
TYPE_KEYWORDS = frozenset(
    "type format items collectionFormat default maximum exclusiveMaximum minimum exclusiveMinimum"
    " maxLength minLength pattern maxItems minItems uniqueItems enum multipleOf x-nullable".split()
)
# collectionFormat -> (style, explode) for query values and form fields. tsv has no equivalent.
QUERY_STYLES = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "tsv": ("form", False),
    "multi": ("form", True),
}
# 2.0 flow -> (3.0 flow, the URLs that flow carries); the 3.0 flow objects allow no others.
OAUTH_FLOWS = {
    "implicit": ("implicit", ("authorizationUrl",)),
    "password": ("password", ("tokenUrl",)),
    "application": ("clientCredentials", ("tokenUrl",)),
    "accessCode": ("authorizationCode", ("authorizationUrl", "tokenUrl")),
}
PARAMETER_REF = "#/parameters/"
REF_PREFIXES = {
    "#/definitions/": "#/components/schemas/",
    PARAMETER_REF: "#/components/parameters/",
    "#/responses/": "#/components/responses/",
}


class ConversionError(ValueError):
    """The Swagger document cannot be converted: `pointer` says where, `message` what is wrong."""

    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = pointer
        self.message = message
        super().__init__(f"{pointer}: {message}")


def convert(
    doc: dict[str, Any], *, unusable: dict[str, str] | None = None, notes: list[str] | None = None
) -> dict[str, Any]:
    """The OpenAPI 3.0.3 equivalent of the Swagger 2.0 document `doc`, as a new dict. With
    `unusable`, an operation that cannot be converted is recorded there instead of raising, and
    `notes` gets what was left out of the shared definitions."""
    _object(doc, "#")
    if str(doc.get("swagger")) != "2.0":
        raise ConversionError("#/swagger", f"expected '2.0', got {doc.get('swagger')!r}")
    return _Converter(doc, unusable, notes if notes is not None else []).run()


def _object(value: Any, pointer: str, kind: type = dict) -> Any:
    if not isinstance(value, kind):
        what = "an object" if kind is dict else "an array"
        raise ConversionError(pointer, f"must be {what}, got {type(value).__name__}")
    return value


def _list(value: Any, pointer: str) -> list[Any]:
    checked: list[Any] = _object(value, pointer, list)
    return checked


def _ref(value: Any, pointer: str) -> str:
    if not isinstance(value, str):
        raise ConversionError(pointer, "$ref must be a string")
    for old, new in REF_PREFIXES.items():
        if value.startswith(old):
            return new + value[len(old) :]
    return value


def _extensions(node: dict[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(value) for key, value in node.items() if str(key).startswith("x-")}


def _media_types(own: Any, inherited: Any, pointer: str) -> list[str]:
    types = own if own is not None else inherited
    return list(_list(types, pointer)) if types else [DEFAULT_MEDIA_TYPE]


def _content(schema: dict[str, Any], media_types: list[str]) -> dict[str, Any]:
    # Each media type gets its own copy so callers can edit one without touching the others.
    return {media_type: {"schema": copy.deepcopy(schema)} for media_type in media_types}


def _schema(node: Any, pointer: str) -> Any:
    """A schema in its OpenAPI 3.0 form. What has not a schema's shape (a list for `items`, a string
    for a schema) passes through, converted inside: spec/shapes.py decides how to read it."""
    if isinstance(node, list):
        return [_schema(sub, _ptr(pointer, i)) for i, sub in enumerate(node)]
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        here = _ptr(pointer, key)
        if key == "$ref":
            out[key] = _ref(value, here) if isinstance(value, str) else copy.deepcopy(value)
        elif key == "x-nullable":
            if value is True:
                out["nullable"] = True
        elif key == "collectionFormat":
            pass  # from parameter items; becomes style/explode at the top level, has no 3.0 form below it
        elif key == "discriminator" and isinstance(value, str):
            out[key] = {"propertyName": value}
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _schema(sub, _ptr(here, name)) for name, sub in value.items()}
        elif key in ("items", "not", "additionalProperties", "allOf", "anyOf", "oneOf"):
            out[key] = _schema(value, here)
        else:
            out[key] = copy.deepcopy(value)
    if node.get("type") == "file":
        out.update(type="string", format="binary")
    if "$ref" in out and not isinstance(out["$ref"], str):
        return out
    if "$ref" in out and out.get("nullable"):
        # OpenAPI 3.0 ignores a $ref's siblings, so a nullable reference needs a wrapper.
        siblings = {key: value for key, value in out.items() if key != "$ref"}
        return {"allOf": [{"$ref": out["$ref"]}], **siblings}
    return out


def _value_schema(node: dict[str, Any], pointer: str) -> dict[str, Any]:
    """The schema of a non-body parameter, form field or header, from its type keywords."""
    schema: dict[str, Any] = _schema({key: value for key, value in node.items() if key in TYPE_KEYWORDS}, pointer)
    return schema


def _style(param: dict[str, Any], where: str, pointer: str) -> tuple[str, bool] | None:
    if param.get("type") != "array":
        return None
    fmt = param.get("collectionFormat", "csv")  # 2.0's default, unlike 3.0's exploded form
    if fmt not in QUERY_STYLES:
        raise ConversionError(_ptr(pointer, "collectionFormat"), f"unknown collectionFormat {fmt!r}")
    return QUERY_STYLES[fmt] if where in ("query", "formData") else ("simple", False)


def _with_schema(node: Any, pointer: str) -> dict[str, Any]:
    """A header or non-body parameter with its type keywords moved into `schema`."""
    out = {key: copy.deepcopy(value) for key, value in _object(node, pointer).items() if key not in TYPE_KEYWORDS}
    out["schema"] = _value_schema(node, pointer)
    return out


def _parameter(param: dict[str, Any], pointer: str) -> dict[str, Any]:
    out = _with_schema(param, pointer)
    if param["in"] == "path":
        out["required"] = True
    style = _style(param, param["in"], pointer)
    if style:
        out["style"], out["explode"] = style
    return out


def _request_body(param: dict[str, Any], media_types: list[str], pointer: str) -> dict[str, Any]:
    schema = _schema(param.get("schema", {}), _ptr(pointer, "schema"))
    body: dict[str, Any] = {"description": param["description"]} if "description" in param else {}
    body["content"] = _content(schema, media_types)
    if param.get("required"):
        body["required"] = True
    if "name" in param:
        body["x-codegen-request-body-name"] = param["name"]
    body.update(_extensions(param))
    return body


def _form_body(fields: list[tuple[dict[str, Any], str]], consumes: list[str]) -> dict[str, Any]:
    properties, required, encoding = {}, [], {}
    for param, pointer in fields:
        prop = _value_schema(param, pointer)
        if "description" in param:
            prop["description"] = param["description"]
        properties[param["name"]] = prop
        if param.get("required"):
            required.append(param["name"])
        style = _style(param, "formData", pointer)
        if style and style != ("form", True):
            encoding[param["name"]] = {"style": style[0], "explode": style[1]}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if any(param.get("type") == "file" for param, _ in fields):
        media_types = [MULTIPART]
    else:
        media_types = [media for media in consumes if media in (FORM, MULTIPART)] or [FORM]
    content = _content(schema, media_types)
    if encoding and FORM in content:
        content[FORM]["encoding"] = encoding
    return {"content": content, "required": True} if required else {"content": content}


def _response(response: Any, produces: list[str], pointer: str) -> dict[str, Any]:
    _object(response, pointer)
    if "$ref" in response:
        return {"$ref": _ref(response["$ref"], _ptr(pointer, "$ref"))}
    out: dict[str, Any] = {"description": response.get("description", "")}
    if "headers" in response:
        here = _ptr(pointer, "headers")
        out["headers"] = {
            name: _with_schema(header, _ptr(here, name)) for name, header in _object(response["headers"], here).items()
        }
    if "schema" in response:
        schema = _schema(response["schema"], _ptr(pointer, "schema"))
        content = _content(schema, produces)
        examples = _object(response.get("examples", {}), _ptr(pointer, "examples"))
        for media_type, example in examples.items():
            content.setdefault(media_type, {"schema": copy.deepcopy(schema)})["example"] = copy.deepcopy(example)
        out["content"] = content
    out.update(_extensions(response))
    return out


def _responses(responses: Any, produces: list[str], pointer: str) -> dict[str, Any]:
    return {
        str(code): (
            copy.deepcopy(value) if str(code).startswith("x-") else _response(value, produces, _ptr(pointer, code))
        )
        for code, value in _object(responses, pointer).items()
    }


def _security_scheme(scheme: Any, pointer: str) -> dict[str, Any]:
    _object(scheme, pointer)
    kind = scheme.get("type")
    if kind == "apiKey":
        return copy.deepcopy(scheme)
    if kind == "basic":
        out: dict[str, Any] = {"type": "http", "scheme": "basic"}
    elif kind == "oauth2":
        if scheme.get("flow") not in OAUTH_FLOWS:
            raise ConversionError(_ptr(pointer, "flow"), f"unknown oauth2 flow {scheme.get('flow')!r}")
        name, urls = OAUTH_FLOWS[scheme["flow"]]
        flow = {url: scheme[url] for url in urls if url in scheme}
        flow["scopes"] = copy.deepcopy(scheme.get("scopes") or {})
        out = {"type": "oauth2", "flows": {name: flow}}
    else:
        raise ConversionError(_ptr(pointer, "type"), f"unknown security scheme type {kind!r}")
    if "description" in scheme:
        out["description"] = scheme["description"]
    out.update(_extensions(scheme))
    return out


def _servers(doc: dict[str, Any], schemes: Any) -> list[dict[str, Any]]:
    base_path = doc.get("basePath") or ""
    if not doc.get("host"):
        return [{"url": base_path or "/"}]
    schemes = schemes or doc.get("schemes") or ["https"]
    scheme = "https" if "https" in schemes else schemes[0]
    return [{"url": f"{scheme}://{doc['host']}{base_path}"}]


class _Converter:
    def __init__(self, doc: dict[str, Any], unusable: dict[str, str] | None, notes: list[str]) -> None:
        self.doc = doc
        self.unusable = unusable  # None: the first broken operation raises
        self.notes = notes
        self.broken_parameters: dict[str, ConversionError] = {}  # shared parameters left out, and why
        self.parameters = _object(doc.get("parameters", {}), "#/parameters")
        self.consumes = _media_types(None, doc.get("consumes"), "#/consumes")
        self.produces = _media_types(None, doc.get("produces"), "#/produces")
        self.servers = _servers(doc, None)

    def run(self) -> dict[str, Any]:
        doc = self.doc
        out: dict[str, Any] = {"openapi": "3.0.3", "info": copy.deepcopy(_object(doc.get("info"), "#/info"))}
        out["servers"] = self.servers
        out.update({key: copy.deepcopy(doc[key]) for key in ("externalDocs", "tags", "security") if key in doc})
        paths = _object(doc.get("paths"), "#/paths")
        out["paths"] = {
            path: copy.deepcopy(item)
            if path.startswith("x-") or (self.unusable is not None and not isinstance(item, dict))
            else self._path_item(path, item, _ptr("#/paths", path))
            for path, item in paths.items()
        }
        out["components"] = self._components()
        out.update(_extensions(doc))
        return out

    def _components(self) -> dict[str, Any]:
        doc = self.doc
        schemas = _object(doc.get("definitions", {}), "#/definitions")
        responses = _object(doc.get("responses", {}), "#/responses")
        security = _object(doc.get("securityDefinitions", {}), "#/securityDefinitions")
        parameters, bodies = {}, {}
        for name, param in self.parameters.items():
            here = _ptr("#/parameters", name)
            try:
                where = _object(param, here).get("in")
                if where == "body":
                    bodies[name] = _request_body(param, self.consumes, here)
                elif where != "formData":  # 3.0 has no form parameters; operations inline them instead
                    parameters[name] = _parameter(_checked(param, here), here)
            except ConversionError as exc:
                if self.unusable is None:
                    raise
                self.broken_parameters[name] = exc  # the operations that use it say why they are skipped
        components = {
            "schemas": {name: _schema(s, _ptr("#/definitions", name)) for name, s in schemas.items()},
            "parameters": parameters,
            "requestBodies": bodies,
            "responses": self._shared(responses, "#/responses", lambda r, at: _response(r, self.produces, at)),
            "securitySchemes": self._shared(security, "#/securityDefinitions", _security_scheme),
        }
        return {key: value for key, value in components.items() if value}

    def _shared(
        self, entries: dict[str, Any], base: str, convert_one: Callable[[Any, str], dict[str, Any]]
    ) -> dict[str, Any]:
        """Converted shared definitions; a broken one is left out with a note (when not raising):
        a ref to it then dangles, and only the operations that use it are skipped."""
        out = {}
        for name, entry in entries.items():
            try:
                out[name] = convert_one(entry, _ptr(base, name))
            except ConversionError as exc:
                if self.unusable is None:
                    raise
                self.notes.append(f"{exc}: left out")
        return out

    def _path_item(self, path: str, item: Any, pointer: str) -> dict[str, Any]:
        _object(item, pointer)
        out: dict[str, Any] = {}
        for key, value in item.items():
            if key in METHODS:
                try:
                    out[key] = self._operation(value, item.get("parameters", []), _ptr(pointer, key), pointer)
                except ConversionError as exc:
                    if self.unusable is None:
                        raise
                    self.unusable[f"{key.upper()} {path}"] = str(exc)
                    out[key] = _stub(value)
            elif key == "$ref":
                out[key] = _ref(value, _ptr(pointer, key))
            elif key != "parameters":  # path-level parameters are merged into each operation
                out[key] = copy.deepcopy(value)
        return out

    def _operation(self, op: Any, path_params: Any, pointer: str, path_pointer: str) -> dict[str, Any]:
        _object(op, pointer)
        consumes = _media_types(op.get("consumes"), self.doc.get("consumes"), _ptr(pointer, "consumes"))
        produces = _media_types(op.get("produces"), self.doc.get("produces"), _ptr(pointer, "produces"))
        params, body = self._inputs(path_params, op.get("parameters", []), consumes, pointer, path_pointer)
        skipped = ("parameters", "responses", "consumes", "produces", "schemes")
        out = {key: copy.deepcopy(value) for key, value in op.items() if key not in skipped}
        if params:
            out["parameters"] = params
        if body:
            out["requestBody"] = body
        out["responses"] = _responses(op.get("responses"), produces, _ptr(pointer, "responses"))
        servers = _servers(self.doc, op["schemes"]) if op.get("schemes") and self.doc.get("host") else None
        if servers and servers != self.servers:
            out["servers"] = servers
        return out

    def _inputs(
        self, path_params: Any, op_params: Any, consumes: list[str], pointer: str, path_pointer: str
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Parameters and request body of an operation, its own parameters overriding the path's."""
        merged: dict[Any, tuple[dict[str, Any], dict[str, Any] | None, str]] = {}
        for params, base in ((path_params, _ptr(path_pointer, "parameters")), (op_params, _ptr(pointer, "parameters"))):
            for i, param in enumerate(_list(params, base)):
                here = _ptr(base, i)
                resolved = self._resolve(_object(param, here), here)
                key = (resolved["name"], resolved["in"]) if resolved else _ref(param["$ref"], _ptr(here, "$ref"))
                merged[key] = (param, resolved, here)
        parameters: list[dict[str, Any]] = []
        body: dict[str, Any] | None = None
        form: list[tuple[dict[str, Any], str]] = []
        for param, resolved, here in merged.values():
            if resolved is not None and resolved["in"] == "body":
                if body:
                    raise ConversionError(here, "an operation can have only one body parameter")
                body = self._body(param, resolved, consumes, here)
            elif resolved is not None and resolved["in"] == "formData":
                form.append((resolved, here))
            elif "$ref" in param:
                parameters.append({"$ref": _ref(param["$ref"], _ptr(here, "$ref"))})
            else:
                parameters.append(_parameter(param, here))
        if body and form:
            raise ConversionError(pointer, "an operation cannot have both body and formData parameters")
        return parameters, body or (_form_body(form, consumes) if form else None)

    def _body(
        self, param: dict[str, Any], resolved: dict[str, Any], consumes: list[str], pointer: str
    ) -> dict[str, Any]:
        # A shared request body carries the global media types; if the operation's differ, inline it.
        if "$ref" in param and consumes == self.consumes:
            return {"$ref": "#/components/requestBodies/" + param["$ref"][len(PARAMETER_REF) :]}
        return _request_body(resolved, consumes, pointer)

    def _resolve(self, param: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        """The parameter itself, or the global one it refers to; None if it refers elsewhere (another file)."""
        if "$ref" not in param:
            return _checked(param, pointer)
        ref = param["$ref"]
        if not isinstance(ref, str) or not ref.startswith(PARAMETER_REF):
            return None
        name = unquote(ref[len(PARAMETER_REF) :]).replace("~1", "/").replace("~0", "~")
        if name in self.broken_parameters:
            raise self.broken_parameters[name]
        if name not in self.parameters:
            raise ConversionError(_ptr(pointer, "$ref"), f"{ref} does not resolve")
        return _checked(self.parameters[name], _ptr("#/parameters", name))


def _stub(op: Any) -> dict[str, Any]:
    """What naming and curation read of an operation that cannot be converted (the plan skips it)."""
    if not isinstance(op, dict):
        return {}
    return {key: copy.deepcopy(op[key]) for key in ("operationId", "tags", "x-mcp") if key in op}


def _checked(param: Any, pointer: str) -> dict[str, Any]:
    for key in ("name", "in"):
        if not isinstance(_object(param, pointer).get(key), str):
            raise ConversionError(pointer, f"parameter needs a string {key!r}")
    checked: dict[str, Any] = param
    return checked
