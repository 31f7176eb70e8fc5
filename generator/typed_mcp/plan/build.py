"""Step 3: turn the document into the IR (`ApiPlan`): one `Operation` per path x method.

An operation this generator cannot express is skipped with its reason recorded in the plan's
report; nothing disappears silently.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urljoin

from typed_mcp import names
from typed_mcp.errors import NoOperationsError, SpecError
from typed_mcp.plan.curation import Curation
from typed_mcp.plan.ir import ApiPlan, Body, Operation, Parameter, Response, SecurityScheme, Skipped
from typed_mcp.plan.variants import COMPONENT_SCHEMA, Views
from typed_mcp.spec.load import redact_url
from typed_mcp.spec.normalize import HTTP_METHODS, Document
from typed_mcp.spec.patterns import portable_pattern
from typed_mcp.spec.repairs import implied_type

_STATUS_ORDER = ("200", "201", "202", "203", "206", "2XX", "204", "205", "default")
_NO_BODY = ("204", "205")
DEFAULT_STYLE = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
_IGNORED_HEADERS = {"accept", "content-type", "authorization"}
# Headers that frame the message, route it or act hop by hop (RFC 9110 7.6.1): the HTTP client owns
# them, and a caller that set one could reach another virtual host or smuggle a request.
_FORBIDDEN_HEADERS = {
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "te",
    "upgrade",
    "keep-alive",
    "trailer",
    "trailers",
    "expect",
}
_HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _body_names() -> Iterator[str]:
    """The body argument's name: `body`, or the first of `request_body`, `request_body_2`... that
    no parameter took."""
    yield from ("body", "request_body")
    yield from (f"request_body_{n}" for n in itertools.count(2))


def _unsendable_header(name: str) -> str | None:
    """Why a header parameter is never sent, or None when it may be."""
    if not _HEADER_TOKEN.fullmatch(name):
        return "not a valid HTTP header name"
    lowered = name.lower()
    if lowered in _FORBIDDEN_HEADERS or lowered.startswith("proxy-"):
        return "a framing, routing or hop-by-hop header the HTTP client sets itself"
    return None


class Unsupported(Exception):
    """This operation cannot be generated; the message is the reason shown in the report."""


def plan(
    doc: Document,
    *,
    package_name: str,
    module: str,
    spec_url: str | None = None,
    tool_prefix: str = "",
    curation: Curation | None = None,
) -> ApiPlan:
    """`tool_prefix` starts every tool name (see `names.tool_prefix`); it counts within the limits.
    `curation` chooses the operations and their names, and finishes the plan (plan/curation.py)."""
    prefix = names.tool_prefix(tool_prefix)
    data = doc.data
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    schemes = _security_schemes(doc, module.upper())
    result = ApiPlan(
        title=_text(info.get("title")) or module,
        api_version=_text(info.get("version")) or "0",
        description=_text(info.get("description")) or "",
        openapi_version=doc.version,
        default_base_url=_default_base_url(data, spec_url),
        package_name=package_name,
        module=module,
        env_prefix=module.upper(),
        operations=[],
        schemes=schemes,
    )
    unusable = dict(doc.unusable)  # "METHOD /path" -> why it cannot be generated
    result.degraded = list(doc.degraded)
    raw_ops = list(_iter_operations(doc, unusable, result.degraded))
    if not raw_ops:
        webhooks = data.get("webhooks")
        extra = (
            f" (it has {len(webhooks)} webhooks, which are not callable)"
            if isinstance(webhooks, dict) and webhooks
            else ""
        )
        raise NoOperationsError(f"the document has no operations under 'paths'{extra}", source=doc.origin)
    if curation is not None:
        raw_ops = curation.select(doc, raw_ops)
        if not raw_ops:
            raise NoOperationsError(
                "the curation (x-mcp, overlays, config) excludes every operation", source=doc.origin
            )

    target = max(names.TARGET_TOOL_NAME - len(prefix), names.TARGET_TOOL_NAME // 2)
    tool_names = names.unique_tool_names(
        (
            (
                key,
                names.tool_name_candidates(
                    op.get("operationId") if isinstance(op.get("operationId"), str) else None, method, path, target
                ),
            )
            for key, path, method, _, op in raw_ops
            if curation is None or not curation.named(key)
        ),
        limit=names.MAX_TOOL_NAME - len(prefix),
        target=target,
    )
    if curation is not None:
        tool_names = curation.tool_names(prefix, tool_names)
    component_names = set((data.get("components") or {}).get("schemas") or {})
    taken_keys = set(component_names)
    views = Views(doc, taken_keys)
    root_security = data.get("security")
    for key, path, method, path_item, op in raw_ops:
        tool = prefix + tool_names[key]
        schemas, warnings = dict(result.schemas), len(result.warnings)
        try:
            if key in unusable:
                raise Unsupported(unusable[key])
            result.operations.append(
                _operation(
                    doc, key, path, method, path_item, op, tool, root_security, schemes, result, taken_keys, views
                )
            )
        except (Unsupported, SpecError, *_MALFORMED) as exc:
            # The unit of failure is the operation: what it had added goes, the others stay.
            result.schemas.clear()
            result.schemas.update(schemas)
            del result.warnings[warnings:]
            result.skipped.append(Skipped(key, _reason(exc)))
    if curation is not None:
        curation.finish(result)
    if not result.operations:
        reasons = "; ".join(f"{s.key}: {s.reason}" for s in result.skipped[:3])
        raise NoOperationsError(f"no operation could be generated ({reasons})", source=doc.origin)
    return result


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _default_base_url(data: dict[str, Any], spec_url: str | None) -> str | None:
    servers = data.get("servers")
    url = "/"
    if (
        isinstance(servers, list)
        and servers
        and isinstance(servers[0], dict)
        and isinstance(servers[0].get("url"), str)
    ):
        server = servers[0]
        url = server["url"]
        for name, variable in (server.get("variables") or {}).items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + str(name) + "}", str(variable["default"]))
    if url.startswith(("http://", "https://")):
        return url.rstrip("/") or url
    if spec_url:
        # Relative to where the spec was fetched, never with that URL's user info, query or fragment:
        # they may hold a credential (`https://user:token@host/`, `?access_token=`).
        return urljoin(redact_url(spec_url), url).rstrip("/")
    return None


def _iter_operations(doc: Document, unusable: dict[str, str], degraded: list[str]):
    """Every operation; one that cannot be read is yielded as `{}` with its reason in `unusable`,
    and a path item that cannot be read is left out with a note in `degraded`."""
    paths = doc.data.get("paths") or {}
    for path, path_item in paths.items():
        pointer = "#/paths/" + path.replace("~", "~0").replace("/", "~1")
        try:
            path_item, _ = doc.deref(path_item, pointer)
        except SpecError as exc:
            degraded.append(f"{pointer}: {exc.message}: its operations are left out")
            continue
        if not isinstance(path_item, dict):
            degraded.append(f"{pointer}: a path item must be an object: left out")
            continue
        for method in HTTP_METHODS:
            key, op = f"{method.upper()} {path}", path_item.get(method)
            if op is None:
                continue
            try:
                op, _ = doc.deref(op, f"{pointer}/{method}")  # Redocly's `get: {$ref: ...}`, within the file
            except SpecError as exc:
                unusable.setdefault(key, f"{exc.message} ({exc.pointer})")
            if not isinstance(op, dict):
                unusable.setdefault(key, f"the operation must be an object, got {type(op).__name__}")
                op = {}
            yield key, path, method, path_item, op


# What malformed spec data raises where the plan reads a shape it expects (a list for an object):
# a reason for skipping that operation, not for ending the run.
_MALFORMED = (AttributeError, TypeError, KeyError, ValueError, IndexError)


def _reason(exc: Exception) -> str:
    if isinstance(exc, SpecError):
        return f"{exc.message} ({exc.pointer})" if exc.pointer else exc.message
    if isinstance(exc, Unsupported):
        return str(exc)
    return f"part of the operation has an unexpected shape ({type(exc).__name__}: {exc})"


def _operation(
    doc: Document,
    key: str,
    path: str,
    method: str,
    path_item: dict[str, Any],
    op: dict[str, Any],
    tool: str,
    root_security: Any,
    schemes: dict[str, SecurityScheme],
    result: ApiPlan,
    taken_keys: set[str],
    views: Views,
) -> Operation:
    # Some specs tell operations on one path apart with a fragment (`/files/{id}#copy`) or a
    # fixed query (`/search?type=user`): neither is part of the path that is requested.
    request_path, _, query_text = path.split("#", 1)[0].partition("?")
    if not request_path.startswith("/") or any(c in request_path for c in "\r\n\\"):
        raise Unsupported(f"path {path!r} is not a plain absolute path")
    fixed_query = tuple(parse_qsl(query_text, keep_blank_values=True))
    dropped: list[str] = []
    params = _parameters(doc, request_path, path_item, op, dropped)
    result.warnings.extend(f"{key}: {reason}" for reason in dropped)
    body = _body(doc, path_item, op, tool, result, taken_keys, {p.arg_name for p in params}, views)
    response = _response(doc, op, tool, result, taken_keys, views)
    if method.lower() == "head" and response.kind != "empty":
        # A HEAD response never has a body (HTTP), whatever the spec declares for it.
        response = Response(status=response.status, kind="empty", media_type=None)
    summary = _text(op.get("summary"))
    description = _text(op.get("description"))
    text = "\n\n".join(part for part in (summary, description if description != summary else None) if part)
    if op.get("deprecated") is True:
        text = ("Deprecated. " + text) if text else "Deprecated."
    return Operation(
        key=key,
        tool_name=tool,
        func_name=names.python_name(tool),
        method=method.upper(),
        path=request_path,
        fixed_query=fixed_query,
        operation_id=op.get("operationId") if isinstance(op.get("operationId"), str) else None,
        title=summary,
        description=text or key,
        parameters=params,
        body=body,
        response=response,
        security=_security(op.get("security", root_security), schemes),
        tags=tuple(t for t in op.get("tags", []) if isinstance(t, str)),
        deprecated=op.get("deprecated") is True,
    )


# --- parameters -------------------------------------------------------------------------------


def _declared_parameters(doc: Document, path_item: dict[str, Any], op: dict[str, Any]) -> Iterator[Any]:
    """The path item's parameters, then the operation's (which override them), dereferenced."""
    for source in (path_item.get("parameters") or [], op.get("parameters") or []):
        for raw in source:
            yield doc.deref(raw, "#")[0]


def _parameters(
    doc: Document, path: str, path_item: dict[str, Any], op: dict[str, Any], dropped: list[str] | None = None
) -> tuple[Parameter, ...]:
    """The operation's parameters; a header parameter that is never sent is left out, its reason
    appended to `dropped`."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in _declared_parameters(doc, path_item, op):
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise Unsupported("a parameter without a name")
        location = param.get("in")
        if location not in DEFAULT_STYLE:
            raise Unsupported(f"parameter {param['name']!r} is in {location!r}")
        if location == "header" and param["name"].lower() in _IGNORED_HEADERS:
            continue  # OpenAPI: these are set by the content negotiation and auth instead
        if location == "header" and (reason := _unsendable_header(param["name"])):
            if dropped is not None:
                dropped.append(f"header parameter {param['name']!r} is not sent: {reason}")
            continue
        merged[(param["name"], location)] = param
    template_names = set(re.findall(r"{([^{}]+)}", path))
    missing = template_names - {name for name, loc in merged if loc == "path"}
    if missing:
        raise Unsupported(f"path parameter(s) {', '.join(sorted(missing))} not declared")
    arg_names = names.unique_argument_names([(name, loc, names.argument_name(name)) for (name, loc) in merged])
    params = []
    for (name, location), param in merged.items():
        if location == "path" and name not in template_names:
            continue  # declared but not in the template: nothing to substitute
        params.append(_parameter(doc, param, location, arg_names[(name, location)]))
    # Required first, so the function signature is valid Python without reordering defaults.
    params.sort(key=lambda p: not p.required or p.has_default)
    return tuple(params)


def _parameter(doc: Document, param: dict[str, Any], location: str, arg_name: str) -> Parameter:
    schema = param.get("schema")
    if schema is None and isinstance(param.get("content"), dict) and param["content"]:
        schema = next(iter(param["content"].values())).get("schema")
    schema = _merged_all_of(doc, schema if isinstance(schema, dict) else {})
    resolved, _ = doc.deref(schema, "#")
    required = location == "path" or param.get("required") is True
    annotation = python_type(doc, schema)
    if location == "path":
        # A path segment cannot be null (or anything but text), whatever the schema says.
        annotation = "str" if annotation == "Any" else annotation.removesuffix(" | None")
    has_default = isinstance(resolved, dict) and "default" in resolved and not required
    style = param.get("style") if isinstance(param.get("style"), str) else None
    explode = param.get("explode") if isinstance(param.get("explode"), bool) else None
    if style == DEFAULT_STYLE[location]:
        style = None
    if explode is not None and explode == ((style or DEFAULT_STYLE[location]) == "form"):
        explode = None
    if style not in (None, "form", "simple", "spaceDelimited", "pipeDelimited", "deepObject", "label", "matrix"):
        raise Unsupported(f"parameter {param['name']!r} has style {style!r}")
    return Parameter(
        wire_name=param["name"],
        location=location,  # type: ignore[arg-type]
        arg_name=arg_name,
        required=required,
        annotation=annotation if required or has_default or annotation.endswith(" | None") else f"{annotation} | None",
        description=_text(param.get("description"))
        or _text(resolved.get("description") if isinstance(resolved, dict) else None),
        has_default=has_default,
        default=resolved.get("default") if has_default else None,
        style=style,
        explode=explode,
        constraints=_applicable(_constraints(_non_null_branch(doc, resolved)), annotation)
        if isinstance(resolved, dict)
        else (),
    )


def _merged_all_of(doc: Document, schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A parameter schema with its `allOf` parts merged into one: all of them apply (Cloudflare's
    `region`: `allOf: [{$ref: an enum}, {default: us-central1}]` was published as any value). A
    parameter is a scalar or a list of scalars, so merging the keywords is enough; the schema's own
    keywords come last."""
    resolved, _ = doc.deref(schema, "#")
    if not isinstance(resolved, dict) or not isinstance(resolved.get("allOf"), list) or depth > 8:
        return resolved if isinstance(resolved, dict) else {}
    merged: dict[str, Any] = {}
    for part in resolved["allOf"]:
        merged.update(_merged_all_of(doc, part, depth + 1) if isinstance(part, dict) else {})
    merged.update({k: v for k, v in resolved.items() if k != "allOf"})
    return merged


_NUMERIC = ("ge", "le", "gt", "lt")


def _applicable(constraints: tuple[tuple[str, Any], ...], annotation: str) -> tuple[tuple[str, Any], ...]:
    """Bounds only on numbers and lengths only on strings and lists: pydantic raises a TypeError (not
    a validation error) for `ge` on a string."""
    base = annotation.removesuffix(" | None")
    numeric = base in ("int", "float")
    sized = base == "str" or base.startswith("list[")
    return tuple(
        (k, v)
        for k, v in constraints
        if (numeric if k in _NUMERIC else sized if k in ("min_length", "max_length") else True)
    )


def _non_null_branch(doc: Document, schema: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, {type: "null"}]` (OpenAPI 3.1's nullable, as Airflow writes it) -> X, so that X's
    format, pattern and bounds still reach the argument; any other schema as it is."""
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(branches, list):
        return schema
    resolved = [doc.deref(b, "#")[0] for b in branches]
    others = [b for b in resolved if not (isinstance(b, dict) and b.get("type") == "null")]
    return others[0] if len(others) == 1 and len(others) < len(resolved) and isinstance(others[0], dict) else schema


_CONSTRAINTS = {
    "minimum": "ge",
    "maximum": "le",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_length",
    "maxItems": "max_length",
}


def _constraints(schema: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Numeric bounds and lengths, as pydantic Field keywords; only real numbers are taken."""
    found: dict[str, Any] = {}
    for keyword, argument in _CONSTRAINTS.items():
        value = schema.get(keyword)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[argument] = value
    for keyword, argument in (("exclusiveMinimum", "gt"), ("exclusiveMaximum", "lt")):
        value = schema.get(keyword)
        if isinstance(value, (int, float)) and not isinstance(value, bool):  # OpenAPI 3.1 spelling
            found[argument] = value
        elif value is True and ("ge" if argument == "gt" else "le") in found:  # OpenAPI 3.0 spelling
            found[argument] = found.pop("ge" if argument == "gt" else "le")
    types = schema.get("type")
    is_string = (
        types == "string"
        or (isinstance(types, list) and [t for t in types if t != "null"] == ["string"])
        or (types is None and implied_type(schema) == "string")
    )
    fmt = schema.get("format")
    # A string's format and pattern tell the model (and any client) what to send: `date-time`, an
    # `^AC[0-9a-f]{32}$` account id... The value stays a string, passed on as given: the upstream API
    # judges it (patterns are ECMA-262 regexes, which Python's `re` does not always read the same).
    extra: dict[str, Any] = {}
    if is_string and isinstance(fmt, str) and _FORMAT.fullmatch(fmt) and "enum" not in schema:
        extra["format"] = fmt
    pattern = (
        portable_pattern(schema["pattern"])
        if is_string and isinstance(schema.get("pattern"), str) and "enum" not in schema
        else None
    )
    if pattern is not None:
        extra["pattern"] = pattern
    if extra:
        found["json_schema_extra"] = extra
    return tuple(sorted(found.items()))


_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def python_type(doc: Document, schema: Any, depth: int = 0) -> str:
    """A Python annotation for a parameter schema. Built from a fixed vocabulary: spec text only
    ever enters as `repr()` of enum values."""
    if depth > 8 or not isinstance(schema, dict):
        return "Any"
    schema, _ = doc.deref(schema, "#")
    if not isinstance(schema, dict):
        return "Any"
    types = schema.get("type")
    nullable = schema.get("nullable") is True or schema.get("x-nullable") is True
    if isinstance(types, list):
        nullable = nullable or "null" in types
        types = [t for t in types if t != "null"]
        types = types[0] if len(types) == 1 else None
    enum = schema.get("enum")
    if "const" in schema and enum is None:
        enum = [schema["const"]]
    if isinstance(enum, list) and enum:
        values = [v for v in enum if v is not None]
        nullable = nullable or len(values) != len(enum)
        if values and all(isinstance(v, (str, int, float)) for v in values):
            text = f"Literal[{', '.join(repr(v) for v in dict.fromkeys(values))}]"
            return f"{text} | None" if nullable else text
    if types == "null":  # OpenAPI 3.1's `anyOf: [{type: integer}, {type: "null"}]` (Airflow)
        return "None"
    if types is None:
        types = implied_type(schema)  # Cloudflare's `page: {minimum: 1}`, `variant_id: {pattern: ...}`
    if types in _SCALARS:
        text = _SCALARS[types]
    elif types == "array":
        item = python_type(doc, schema.get("items"), depth + 1)
        resolved_items, _ = doc.deref(schema.get("items") or {}, "#")
        hints = (
            dict(_constraints(resolved_items)).get("json_schema_extra")
            if item == "str" and isinstance(resolved_items, dict)
            else None
        )
        # An item's format or pattern (Cloudflare's `dateEnd: [date-time]`) is a hint for the items too.
        text = f"list[Annotated[str, Field(json_schema_extra={hints!r})]]" if hints else f"list[{item}]"
    elif types == "object" or "properties" in schema:
        text = "dict[str, Any]"
    elif isinstance(schema.get("anyOf") or schema.get("oneOf"), list):
        parts = [python_type(doc, s, depth + 1) for s in (schema.get("anyOf") or schema.get("oneOf"))]
        nullable = nullable or any(p == "None" or p.endswith(" | None") for p in parts)
        parts = list(dict.fromkeys(p.removesuffix(" | None") for p in parts if p != "None"))
        text = "Any" if "Any" in parts or not parts else " | ".join(parts)
    else:
        text = "Any"
    return f"{text} | None" if nullable and text != "Any" else text


# --- request body -------------------------------------------------------------------------------

_JSON = re.compile(r"^application/(?:[\w.+-]+\+)?json(?:;.*)?$|^application/json", re.I)


def _is_json(media_type: str) -> bool:
    return bool(_JSON.match(media_type.strip()))


def _schema_key(doc: Document, schema: Any, wanted: str, result: ApiPlan, taken: set[str]) -> str:
    """The models key for a schema: a component's own name, or a new key for an inline schema."""
    if isinstance(schema, dict) and set(schema) == {"$ref"} and isinstance(schema["$ref"], str):
        match = COMPONENT_SCHEMA.match(schema["$ref"])
        if match:
            name = match.group(1).replace("~1", "/").replace("~0", "~")
            doc.resolve_pointer(schema["$ref"])  # fail now, with the pointer, when it dangles
            result.schemas.setdefault(name, schema["$ref"])
            return name
    key = wanted
    if key in taken:
        key = f"{wanted}{names.short_hash(wanted, 6).upper()}"
    taken.add(key)
    result.schemas[key] = schema if isinstance(schema, dict) else {}
    return key


def _declared_content_type(doc: Document, path_item: dict[str, Any], op: dict[str, Any]) -> str | None:
    """A fixed media type from a `Content-Type` header parameter (one `enum` value, `const` or
    `default`). OpenAPI says to ignore such a parameter, but some specs (Docker's `POST /build`:
    an `application/octet-stream` body, a `Content-Type` of `application/x-tar`) put the real type
    of a raw body there, and servers and mocks check it; for JSON, form and multipart bodies the
    request body's own media type always wins."""
    declared = None  # the operation's own parameter overrides the path item's
    for param in _declared_parameters(doc, path_item, op):
        if not (
            isinstance(param, dict)
            and param.get("in") == "header"
            and str(param.get("name", "")).lower() == "content-type"
        ):
            continue
        schema, _ = doc.deref(param.get("schema") or {}, "#")
        if not isinstance(schema, dict):
            continue
        enum = schema.get("enum")
        value = schema.get("const", enum[0] if isinstance(enum, list) and len(enum) == 1 else schema.get("default"))
        if isinstance(value, str) and re.fullmatch(r"[\w.+-]+/[\w.+-]+", value):
            declared = value
    return declared


def _body(
    doc: Document,
    path_item: dict[str, Any],
    op: dict[str, Any],
    tool: str,
    result: ApiPlan,
    taken: set[str],
    arg_names: set[str],
    views: Views,
) -> Body | None:
    raw = op.get("requestBody")
    if raw is None:
        return None
    body, _ = doc.deref(raw, "#")
    if not isinstance(body, dict):
        raise Unsupported("the request body is not an object")
    content = _media_map(body.get("content"), "the request body")
    if not content:
        return None
    arg_name = next(name for name in _body_names() if name not in arg_names)
    required = body.get("required") is True
    description = _text(body.get("description"))
    media_type, encoding = _body_encoding(content)
    raw_schema, _ = doc.deref((content[media_type] or {}).get("schema") or {}, "#")
    base64_text = encoding == "base64" and isinstance(raw_schema, dict) and raw_schema.get("format") == "byte"
    if base64_text:
        encoding = "text"  # the wire format is base64 text already: send the argument as it is
    if encoding in ("text", "base64"):
        media_type = _declared_content_type(doc, path_item, op) or media_type
        what = "base64-encoded bytes" if encoding == "base64" or base64_text else "text"
        note = f"Request body ({media_type}), as {what}."
        text = f"{description}\n\n{note}" if description else note
        return Body(
            arg_name, required, None, media_type, encoding, text, base64_argument=encoding == "base64" or base64_text
        )
    schema = views.view((content[media_type] or {}).get("schema", {}), "request")  # without readOnly properties
    key = _schema_key(doc, schema, names.pascal_case(tool) + "Request", result, taken)
    return Body(arg_name, required, key, media_type, encoding, description)


def _body_encoding(content: dict[str, Any]) -> tuple[str, str]:
    """The media type the tool sends, in order of preference, and how its argument is encoded."""
    for media_type in content:
        if _is_json(media_type):
            return media_type, "json"
    for media_type, encoding in (("application/x-www-form-urlencoded", "form"), ("multipart/form-data", "multipart")):
        if media_type in content:
            return media_type, encoding
    media_type = next(iter(content))
    return media_type, "text" if media_type.startswith("text/") else "base64"


# --- response -------------------------------------------------------------------------------------


def _response(doc: Document, op: dict[str, Any], tool: str, result: ApiPlan, taken: set[str], views: Views) -> Response:
    responses = op.get("responses") or {}
    if not isinstance(responses, dict):
        raise Unsupported("'responses' is not an object")
    codes = [c for c in _STATUS_ORDER if c in responses]
    codes += sorted(c for c in responses if c.startswith("2") and c not in codes)
    if len(codes) > 1 and "default" in codes:
        codes.remove("default")  # `default` is the success response only when no 2xx is declared
    if not codes:
        return Response(status="2XX", kind="empty", media_type=None)
    # The primary response: the first 2xx with a body (JSON, if it offers it), in status order: a
    # screenshot's `200 image/png` before its `202` JSON "in progress" note (Cloudflare's urlscanner).
    # HTTP gives 204 and 205 no body, whatever content a spec declares for them (Zoom declares JSON).
    contents = {code: {} if code in _NO_BODY else _content(doc, responses[code], code) for code in codes}
    status = next((c for c in codes if contents[c]), codes[0])
    content = contents[status]
    if not content:
        return Response(status=status, kind="empty", media_type=None)
    media_type = _json_media(content)
    if media_type is not None:
        schema = views.view((content[media_type] or {}).get("schema"), "response")  # without writeOnly properties
        key = _schema_key(doc, schema, names.pascal_case(tool) + "Response", result, taken) if schema else None
        # Other 2xx answers the spec declares without a body (GitHub's "201 created / 204
        # updated"): a success too, whose structured result is null.
        empty = tuple(c for c in codes if not contents[c] and c != "default")
        return Response(
            status=status,
            kind="json",
            media_type=media_type,
            schema_key=key,
            nullable=_nullable(doc, schema),
            empty_statuses=empty,
        )
    media_type = next((m for m in content if _MEDIA_TYPE.fullmatch(m)), None)
    if media_type is None:
        # Not a media type at all (Cloudflare files script content under `string`): nothing to ask
        # for in `Accept`, which servers and mocks refuse; the answer's own Content-Type decides.
        return Response(status=status, kind="binary", media_type=None)
    if media_type.startswith("text/"):
        kind = "text"
    elif media_type.startswith("image/"):
        kind = "image"
    else:
        kind = "binary"
    # Another 2xx answer in JSON (the screenshot's 202) is asked for too, after the primary type:
    # asking for the image alone, such an answer would be refused (406).
    json_also = next((m for c in codes if c != status and (m := _json_media(contents[c])) and m != "*/*"), None)
    return Response(status=status, kind=kind, media_type=media_type, json_also=json_also)  # type: ignore[arg-type]


_MEDIA_TYPE = re.compile(r"[\w.+-]+/[\w.+*-]+(?:\s*;.*)?", re.ASCII)


def _nullable(doc: Document, schema: Any) -> bool:
    """The response schema itself admits `null` (`nullable`, `x-nullable`, or a type list with
    "null"), also through `$ref`s: GitHub's `issue-type` is a nullable object, and a model class
    alone would refuse the `null` the API may send."""
    for _ in range(16):
        if not isinstance(schema, dict):
            return False
        if schema.get("nullable") is True or schema.get("x-nullable") is True:
            return True
        types = schema.get("type")
        if isinstance(types, list) and "null" in types:
            return True
        if not isinstance(schema.get("$ref"), str):
            return False
        schema = doc.resolve_pointer(schema["$ref"])
    return False


def _content(doc: Document, raw: Any, status: str = "") -> dict[str, Any]:
    response, _ = doc.deref(raw, "#")
    if not isinstance(response, dict):
        raise Unsupported(f"response {status} is not an object")
    return _media_map(response.get("content"), f"response {status}")


def _media_map(content: Any, what: str) -> dict[str, Any]:
    """A `content` map whose media type objects are objects; malformed, the operation is skipped."""
    if content is None:
        return {}
    if not isinstance(content, dict) or not all(isinstance(m, dict) or m is None for m in content.values()):
        raise Unsupported(f"{what}: 'content' is not a map of media type objects")
    return content


def _json_media(content: dict[str, Any]) -> str | None:
    media_type = next((m for m in content if _is_json(m)), None)
    if media_type is None and "*/*" in content and isinstance((content["*/*"] or {}).get("schema"), dict):
        media_type = "*/*"
    return media_type


# --- security -------------------------------------------------------------------------------------


def _security_schemes(doc: Document, prefix: str) -> dict[str, SecurityScheme]:
    raw = ((doc.data.get("components") or {}).get("securitySchemes")) or {}
    raw = raw if isinstance(raw, dict) else {}
    schemes: dict[str, SecurityScheme] = {}
    used_vars: set[str] = set()
    for key, value in raw.items():
        try:
            scheme, _ = doc.deref(value, f"#/components/securitySchemes/{key}")
        except SpecError:
            continue  # as an unknown kind: the operations that need only it are skipped
        if not isinstance(scheme, dict):
            continue
        kind_raw = scheme.get("type")
        base = f"{prefix}_{names.snake_case(key).upper() or names.short_hash(key).upper()}"
        if base in used_vars:
            base = f"{base}_{names.short_hash(key, 4).upper()}"
        used_vars.add(base)
        description = _text(scheme.get("description"))
        if kind_raw == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            schemes[key] = SecurityScheme(
                key, "basic", (f"{base}_USERNAME", f"{base}_PASSWORD"), description=description
            )
        elif kind_raw == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
            schemes[key] = SecurityScheme(key, "bearer", (f"{base}_TOKEN",), description=description)
        elif kind_raw == "oauth2" and isinstance(_client_credentials_url(scheme), str):
            # Client credentials: the server fetches (and renews) its own token; a token set directly wins.
            schemes[key] = SecurityScheme(
                key,
                "oauth2",
                (f"{base}_TOKEN",),
                description=description,
                token_url=_client_credentials_url(scheme),
                client_env=(f"{base}_CLIENT_ID", f"{base}_CLIENT_SECRET"),
            )
        elif kind_raw in ("oauth2", "openIdConnect"):
            # An access token obtained out of band is sent as a bearer token.
            schemes[key] = SecurityScheme(key, "bearer", (f"{base}_TOKEN",), description=description)
        elif (
            kind_raw == "apiKey"
            and scheme.get("in") in ("header", "query", "cookie")
            and isinstance(scheme.get("name"), str)
        ):
            schemes[key] = SecurityScheme(
                key,
                "apiKey",
                (f"{base}_KEY",),
                location=scheme["in"],
                param_name=scheme["name"],
                description=description,
            )
    return schemes


def _client_credentials_url(scheme: dict[str, Any]) -> str | None:
    flow = (scheme.get("flows") or {}).get("clientCredentials") if isinstance(scheme.get("flows"), dict) else None
    url = flow.get("tokenUrl") if isinstance(flow, dict) else None
    return url if isinstance(url, str) and url else None


def _security(raw: Any, schemes: dict[str, SecurityScheme]) -> tuple[tuple[str, ...], ...]:
    if not isinstance(raw, list):
        return ()
    alternatives: list[tuple[str, ...]] = []
    for requirement in raw:
        if not isinstance(requirement, dict):
            continue
        if any(name not in schemes for name in requirement):
            continue  # a scheme we cannot apply (e.g. mutual TLS): this alternative is unavailable
        alternatives.append(tuple(requirement))
    if raw and not alternatives:
        return (("<unsupported>",),)
    return tuple(alternatives)
