"""An operation's parameters: which are declared (path item and operation), which are sent (a
header the HTTP client owns is not), and each one's argument: Python annotation, default,
serialization style and the constraints pydantic checks. Annotations come from a fixed vocabulary:
spec text never becomes code."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, TypeGuard

from typed_mcp import names
from typed_mcp.models import literals
from typed_mcp.plan.ir import Location, Parameter
from typed_mcp.plan.reading import Unsupported, nonblank
from typed_mcp.runtime.contracts import HEADER_TOKEN, client_owns_header
from typed_mcp.spec.normalize import Document
from typed_mcp.spec.patterns import portable_pattern
from typed_mcp.spec.repairs import implied_type

DEFAULT_STYLE: dict[Location, str] = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
_IGNORED_HEADERS = {"accept", "content-type", "authorization"}


def _unsendable_header(name: str) -> str | None:
    """Why a header parameter is never sent, or None when it may be."""
    if not HEADER_TOKEN.fullmatch(name):
        return "not a valid HTTP header name"
    if client_owns_header(name):
        return "a framing, routing or hop-by-hop header the HTTP client sets itself"
    return None


def declared_parameters(doc: Document, path_item: dict[str, Any], op: dict[str, Any]) -> Iterator[Any]:
    """The path item's parameters, then the operation's (which override them), dereferenced."""
    for source in (path_item.get("parameters") or [], op.get("parameters") or []):
        for raw in source:
            yield doc.deref(raw, "#")[0]


def operation_parameters(
    doc: Document, path: str, path_item: dict[str, Any], op: dict[str, Any], dropped: list[str] | None = None
) -> tuple[Parameter, ...]:
    """The operation's parameters; a header parameter that is never sent is left out, its reason
    appended to `dropped`."""
    merged: dict[tuple[str, Location], dict[str, Any]] = {}
    for param in declared_parameters(doc, path_item, op):
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise Unsupported("a parameter without a name")
        location = param.get("in")
        if not _is_location(location):
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


def _is_location(value: Any) -> TypeGuard[Location]:
    return value in DEFAULT_STYLE


def _parameter(doc: Document, param: dict[str, Any], location: Location, arg_name: str) -> Parameter:
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
        location=location,
        arg_name=arg_name,
        required=required,
        annotation=annotation if required or has_default or annotation.endswith(" | None") else f"{annotation} | None",
        description=_described(
            nonblank(param.get("description"))
            or nonblank(resolved.get("description") if isinstance(resolved, dict) else None),
            names.renamed_argument_note(param["name"], location, arg_name),
        ),
        has_default=has_default,
        default=resolved.get("default") if has_default else None,
        style=style,
        explode=explode,
        constraints=_applicable(_constraints(_non_null_branch(doc, resolved)), annotation)
        if isinstance(resolved, dict)
        else (),
    )


def _described(description: str | None, note: str | None) -> str | None:
    """The parameter's description, and after it what the API calls an argument renamed for Python."""
    return " ".join(part for part in (description, note) if part) or None


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
            text = f"Literal[{', '.join(repr(v) for v in literals.ordered(values))}]"
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
        parts = [python_type(doc, s, depth + 1) for s in schema.get("anyOf") or schema["oneOf"]]
        nullable = nullable or any(p == "None" or p.endswith(" | None") for p in parts)
        parts = list(dict.fromkeys(p.removesuffix(" | None") for p in parts if p != "None"))
        text = "Any" if "Any" in parts or not parts else " | ".join(parts)
    else:
        text = "Any"
    return f"{text} | None" if nullable and text != "Any" else text
