"""Fidelity: do the generated models and published schemas accept what the ORIGINAL spec allows?

For each operation with a JSON response (all of them, or an evenly spaced deterministic sample),
instances of the original OpenAPI response schema (converted to JSON Schema) are generated with
hypothesis-jsonschema, and each must be
1. accepted by the generated response model,
2. accepted by the published outputSchema (wrapped where the SDK rule says so), also after an
   unknown property is added to every object, and
3. returned unchanged as the tool's structuredContent when a real local upstream serves it.

Run in the generated package's environment: `python -m harness.fidelity PACKAGE_DIR SPEC`.
Needs the `dev` extra (hypothesis, hypothesis-jsonschema, jsonschema).
"""

from __future__ import annotations

import argparse
import copy
import functools
import importlib
import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, get_args

from harness import ref_root
from harness.arguments import synthesize_arguments
from harness.demo.process import HttpServer, Reply
from harness.instances import draw
from typed_mcp.catalog.listing import list_all_tools
from typed_mcp.children import RESULT_MARKER
from typed_mcp.plan.build import plan as build_plan
from typed_mcp.plan.content import is_json
from typed_mcp.spec.load import load
from typed_mcp.spec.normalize import normalize

EXTRA_KEY = "x_fidelity_unknown_property"
_SKIP_KEYS = {"discriminator", "xml", "example", "examples", "externalDocs", "deprecated"}
_DATA_KEYS = {"enum", "const", "default", "required"}
_FORMAT_PATTERNS = {
    "uuid": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    # A part of the ISO 8601 durations AJV's `duration` accepts (hypothesis cannot draw from its lookaheads).
    "duration": "^P[0-9]{1,3}D(T[0-9]{1,2}H)?$",
}


@dataclass
class Report:
    operations: int = 0
    checked: int = 0  # operations with at least one generated instance
    not_generatable: int = 0
    instances: int = 0
    model_ok: int = 0
    schema_ok: int = 0
    open_ok: int = 0
    roundtrip_ok: int = 0
    rejected: list[str] = field(default_factory=list)  # the first rejections, with examples
    ungeneratable: list[str] = field(default_factory=list)  # operations hypothesis found no instance for

    @property
    def passed(self) -> bool:
        return (
            self.instances > 0
            and self.instances == self.model_ok == self.schema_ok == self.open_ok == self.roundtrip_ok
        )

    def reject(self, message: str) -> None:
        if len(self.rejected) < 8:
            self.rejected.append(message[:300])


def to_json_schema(doc: Any, schema: Any) -> dict[str, Any]:
    """An OpenAPI 3.0/3.1 schema as self-contained JSON Schema: refs into `$defs`, `nullable` as a
    null type, boolean exclusive bounds as numbers, OpenAPI-only keywords dropped."""
    defs: dict[str, Any] = {}

    def convert(node: Any, stack: frozenset[str] = frozenset()) -> Any:
        if isinstance(node, list):
            return [convert(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in stack:
                # Recursion ends here: generated instances stop at this depth (optional parts are left
                # out, arrays are empty), so they remain valid instances of the original schema.
                return {"not": {}}
            key = re.sub(r"[^A-Za-z0-9_.-]", "_", ref.lstrip("#/"))
            if key not in defs:
                defs[key] = {}
                defs[key] = convert(doc.resolve_pointer(ref), stack | {ref})
            return {"$ref": f"#/$defs/{key}"}
        out: dict[str, Any] = {}
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
            # OpenAPI: the discriminating property must be present in the payload.
            out["required"] = sorted({*node.get("required", []), discriminator["propertyName"]})
        if "type" not in node and any(k in node for k in ("properties", "additionalProperties", "required")):
            out["type"] = "object"  # how OpenAPI tools (and the model generator) read such a schema
        for key, value in node.items():
            if key in _SKIP_KEYS or key.startswith("x-") or (key == "required" and "required" in out):
                continue
            if key in _DATA_KEYS:
                out[key] = value
            elif key in ("properties", "patternProperties") and isinstance(value, dict):
                out[key] = {name: convert(sub, stack) for name, sub in value.items()}
            else:
                out[key] = convert(value, stack)
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if out.get(bound) is True and plain in out:
                out[bound] = out.pop(plain)
            elif isinstance(out.get(bound), bool):
                del out[bound]
        if out.get("format") in _FORMAT_PATTERNS and "pattern" not in out:
            # hypothesis-jsonschema does not know these formats and would draw any string; the models
            # (and strict clients) check them, so draw strings that have the format.
            out["pattern"] = _FORMAT_PATTERNS[out["format"]]
        if out.pop("nullable", False) is True:
            if isinstance(out.get("type"), (str, list)):
                types = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
                out["type"] = [*types, "null"]
                if "enum" in out and None not in out["enum"]:
                    out["enum"] = [*out["enum"], None]
            else:
                out = {"anyOf": [out, {"type": "null"}]}
        return out

    root = convert(schema)
    return {**root, "$defs": defs} if defs else root


def with_extra_properties(value: Any, schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """The instance with one unknown property added to every object that the schema declares as a
    model (declared `properties`, no schema for additional ones), at every level it can follow."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 64:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        depth += 1
    if not isinstance(schema, dict) or depth > 64:
        return value
    if isinstance(value, list):
        items = schema.get("items", {})
        return [with_extra_properties(v, items, defs, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    properties: dict[str, Any] = dict(schema.get("properties") or {})
    for part in schema.get("allOf") or []:
        while isinstance(part, dict) and isinstance(part.get("$ref"), str):
            part = defs.get(part["$ref"].rsplit("/", 1)[-1], {})
        if isinstance(part, dict):
            properties.update(part.get("properties") or {})
    out = {
        k: with_extra_properties(v, properties[k], defs, depth + 1) if k in properties else v for k, v in value.items()
    }
    if properties and not isinstance(schema.get("additionalProperties"), dict):
        out[EXTRA_KEY] = 1
    return out


def sample(items: list[Any], size: int) -> list[Any]:
    if len(items) <= size:
        return items
    return [items[i * len(items) // size] for i in range(size)]


def check(
    package_dir: Path, spec_path: str, *, sample_size: int = 200, per_op: int = 3, tools: list[str] | None = None
) -> Report:
    import anyio
    import jsonschema
    from mcp import Client

    manifest = json.loads((package_dir / "typed-mcp.json").read_text())
    sys.path.insert(0, str(package_dir / "src"))
    module = manifest["module"]
    server_module = importlib.import_module(f"{module}.server")
    server = server_module.build_server()
    api = importlib.import_module(f"{module}.upstream").api
    functions = {entry.name: entry.fn for entry in server_module.tool_entries()}
    runtime = importlib.import_module(f"{module}._runtime")

    spec = load(spec_path)
    doc = normalize(spec, ref_root=ref_root(spec_path))
    api_plan = build_plan(doc, package_name=manifest["package"], module=module, spec_url=spec.url)
    operations = sorted(
        (op for op in api_plan.operations if op.response.kind == "json" and (not tools or op.tool_name in tools)),
        key=lambda op: op.key,
    )
    report = Report(operations=len(operations))
    for scheme in api.schemes.values():
        for var in scheme.env:
            os.environ[var] = "fidelity-credential"

    async def run() -> None:
        with HttpServer() as upstream:
            api.base_url = upstream.url
            async with Client(server) as client:
                published = {t.name: t for t in await list_all_tools(client)}
                for op in sample(operations, sample_size):
                    await check_operation(op, published[op.tool_name], client, upstream)

    async def check_operation(op, tool, client, upstream) -> None:
        raw_schema = _response_schema(doc, op)
        json_schema = to_json_schema(doc, raw_schema) if raw_schema is not None else {}
        try:
            instances = draw(json_schema, per_op)
        except Exception as exc:  # recursive refs, unsatisfiable schemas: reported, not fatal
            report.not_generatable += 1
            report.ungeneratable.append(f"{op.tool_name} ({type(exc).__name__})")
            return
        if not instances:
            report.not_generatable += 1
            return
        report.checked += 1
        model = get_args(functions[op.tool_name].__annotations__["return"])[1]
        validator = jsonschema.Draft202012Validator(tool.output_schema)
        wrapped = (
            tool.output_schema.get("required") == ["result"]
            and list(tool.output_schema.get("properties", {})) == ["result"]
            and model is not None
            and not _is_object_model(model)
        )
        arguments = _arguments(tool.input_schema)
        for instance in instances:
            report.instances += 1
            structured = {"result": instance} if wrapped else instance
            try:
                runtime.validate_strict(model, json.dumps(instance).encode())  # exactly as the server validates
                report.model_ok += 1
            except Exception as exc:
                report.reject(
                    f"{op.tool_name}: model rejected {json.dumps(instance)[:120]}: {str(exc).splitlines()[0:3]}"
                )
            errors = list(validator.iter_errors(structured))
            report.schema_ok += not errors
            if errors:
                report.reject(f"{op.tool_name}: outputSchema rejected: {errors[0].message[:150]}")
            opened = with_extra_properties(instance, json_schema, json_schema.get("$defs", {}))
            open_errors = list(validator.iter_errors({"result": opened} if wrapped else opened))
            report.open_ok += not open_errors
            if open_errors:
                report.reject(f"{op.tool_name}: outputSchema closed: {open_errors[0].message[:150]}")
            upstream.default = Reply(200, json.dumps(instance))
            result = await client.call_tool(op.tool_name, copy.deepcopy(arguments))
            if not result.is_error and result.structured_content == structured:
                report.roundtrip_ok += 1
            else:
                report.reject(
                    f"{op.tool_name}: structuredContent differs: {(result.content[0].text if result.content else '')[:200]}"
                )

    anyio.run(run)
    return report


@functools.lru_cache(maxsize=4)
def _document(spec_path: str) -> Any:

    return normalize(load(spec_path), ref_root=ref_root(spec_path))


def spec_response_schema(
    spec_path: str | Path, operation: str, status: int, content_type: str
) -> dict[str, Any] | None:
    """The spec's own schema (as JSON Schema) for an answer of `operation` ("GET /pets/{id}") with
    this status and media type: the exact status, else `2XX`, else `default`; None when it has none."""
    doc, op = _spec_operation(spec_path, operation)
    responses = op.get("responses") or {}
    raw = next((responses[k] for k in (str(status), f"{str(status)[0]}XX", "default") if k in responses), None)
    return _content_schema(doc, raw, content_type)


def spec_responses(spec_path: str | Path, operation: str) -> list[str]:
    """The status keys (`200`, `4XX`, `default`) the spec declares for `operation`."""
    _, op = _spec_operation(spec_path, operation)
    responses = op.get("responses")
    return [str(code) for code in responses] if isinstance(responses, dict) else []


def spec_request_schema(spec_path: str | Path, operation: str, content_type: str) -> dict[str, Any] | None:
    """The spec's own schema (as JSON Schema) for the request body of `operation`; None when it has none."""
    doc, op = _spec_operation(spec_path, operation)
    return _content_schema(doc, op.get("requestBody"), content_type)


def spec_parameter_schema(spec_path: str | Path, operation: str, where: str, name: str) -> dict[str, Any] | None:
    """The spec's own schema (as JSON Schema) of the parameter `name` in `where` (path, query,
    header, cookie; path and header names in any case) of `operation`; the operation's own
    declaration wins over its path's."""
    doc = _document(str(spec_path))
    method, path = operation.split(" ", 1)
    item = (doc.data.get("paths") or {}).get(path) or {}
    op = item.get(method.lower()) if isinstance(item.get(method.lower()), dict) else {}
    for raw in [*(op.get("parameters") or []), *(item.get("parameters") or [])]:
        parameter, _ = doc.deref(raw, "#")
        declared = parameter.get("name") if isinstance(parameter, dict) else None
        # Prism names path parameters and headers in lower case.
        same = declared == name or (
            where in ("header", "path") and isinstance(declared, str) and declared.lower() == name.lower()
        )
        if same and parameter.get("in") == where:
            schema = parameter.get("schema")
            return to_json_schema(doc, schema) if isinstance(schema, dict) else None
    return None


def _spec_operation(spec_path: str | Path, operation: str) -> tuple[Any, dict[str, Any]]:
    doc = _document(str(spec_path))
    method, path = operation.split(" ", 1)
    op = ((doc.data.get("paths") or {}).get(path) or {}).get(method.lower())
    return doc, op if isinstance(op, dict) else {}


def media_type(content_type: str) -> str:
    """`application/json` of `Application/JSON; charset=utf-8`."""
    return content_type.split(";")[0].strip().lower()


def _content_schema(doc: Any, raw: Any, content_type: str) -> dict[str, Any] | None:

    holder, _ = doc.deref(raw, "#") if raw is not None else (None, None)
    content = holder.get("content") if isinstance(holder, dict) else None
    if not isinstance(content, dict):
        return None
    media = media_type(content_type)
    chosen = content.get(media) or next((c for m, c in content.items() if is_json(m) or m == "*/*"), None)
    schema = chosen.get("schema") if isinstance(chosen, dict) else None
    return to_json_schema(doc, schema) if isinstance(schema, dict) else None


def _is_object_model(model: Any) -> bool:
    from pydantic import BaseModel, RootModel

    if isinstance(model, type) and issubclass(model, BaseModel) and not issubclass(model, RootModel):
        return True
    return str(model).startswith("dict[str,")


def _response_schema(doc: Any, op: Any) -> Any:
    responses = doc.data["paths"][_path_key(doc, op)][op.method.lower()]["responses"]
    response, _ = doc.deref(responses[op.response.status], "#")
    return (response.get("content", {}).get(op.response.media_type) or {}).get("schema")


def _path_key(doc: Any, op: Any) -> str:
    return op.key.split(" ", 1)[1]


def _arguments(input_schema: dict[str, Any]) -> dict[str, Any]:
    """One valid set of required arguments, made from the published inputSchema by the same
    deterministic synthesizer the strict-client runs use (a random draw can time out on big
    schemas, and a call without its required arguments checks nothing)."""

    return synthesize_arguments(input_schema, required_only=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_dir", type=Path)
    parser.add_argument("spec")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--per-op", type=int, default=3)
    parser.add_argument(
        "--tool", action="append", default=[], help="check only this tool (repeatable): to look into one rejection"
    )
    args = parser.parse_args()
    report = check(args.package_dir, args.spec, sample_size=args.sample, per_op=args.per_op, tools=args.tool)
    print(RESULT_MARKER + json.dumps({**asdict(report), "passed": report.passed}))


if __name__ == "__main__":
    main()
