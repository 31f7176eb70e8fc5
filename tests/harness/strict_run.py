"""A generated package called tool by tool against Prism, through both strict clients, and every
outcome sorted: what the clients refused, what Prism found wrong with the requests, and, for each
answer the server refused, whether the spec's own schema refuses it too (`judge_answer`).

`typed-mcp corpus --calls` and tests/corpus/test_prism_corpus.py run `strict_run_against_prism`. Requests
go through a recording proxy (a real HTTP server on 127.0.0.1) so that each refused answer can be
judged afterwards. Violations that are Prism's own limitations or a spec's contradictions are put
apart only when the recorded request proves it; everything else stays a failure.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.arguments import synthesize_calls
from harness.demo.process import HttpServer, Reply, Seen
from harness.fidelity import (
    media_type,
    spec_parameter_schema,
    spec_request_schema,
    spec_response_schema,
    spec_responses,
)
from harness.node_tools import (
    NODE_DIR,
    REQUEST_LINE,
    NodeToolsError,
    PrismURL,
    prism,
    run_ts_client,
)
from harness.strict_clients import Pass, other_passes
from typed_mcp.catalog.listing import list_all_tools
from typed_mcp.runtime import contracts

SOURCE_META = contracts.SOURCE  # a tool result's provenance

# Prism's own errors when the spec gives it nothing to serve: an object for a `text/*` answer, and
# a media type it has no serializer for, declared without an example (Cloudflare's pcap download).
PRISM_CANNOT_ANSWER = ("stoplight.io/prism/errors#NO_COMPLEX_OBJECT_TEXT", '"title":"Cannot find serializer for ')
# The MCP SDK's refusal of arguments its argument model (the full one, not the published schema) does not take.
ARGUMENTS_REFUSED = re.compile(r"\d+ validation errors? for \S+Arguments\b")


def strict_run_against_prism(
    spec: Path, src: Path, module: str, env: dict[str, str], *, timeout: float = 1800, passes: tuple[Pass, ...] = ()
) -> dict[str, Any]:
    """Serve `spec` with Prism, start the generated server (stdio) on it, list every tool with the
    TypeScript SDK client (its AJV compiles every inputSchema and outputSchema), call every tool with
    arguments made from its inputSchema, and sort the outcomes:

    - ok: the client accepted a non-error result;
    - protocol_errors: the client refused a result (-32602 mismatch, -32600 no structuredContent);
    - prism_cannot_answer: Prism has no answer for the operation (its own error document), or the
      spec declares no success for it (Kubernetes' `GET /logs/`: only a 401), so Prism answers an error;
    - off_spec: the server refused Prism's answer (naming the field), and so does the spec's own
      response schema, with formats checked as strict clients check them (`judge_answer`);
    - model_stricter: the server refused an answer the spec's schema accepts (a bug);
    - email_format: the strict client's `email` format check refused a synthesized argument;
    - transport_failures: Prism's answer was not usable HTTP for httpx (e.g. `101 Switching
      Protocols` for Docker's connection-hijacking endpoints), reported as an error result;
    - beyond_budget: the server's argument model refused arguments made from a trimmed inputSchema
      (the schema budget publishes deep parts as open placeholders: the client could not know them);
      past_budget_requests: Prism's violations in a body at such a placeholder (`split_past_budget`);
    - other_errors: anything else (a bug, until explained);
    - request_violations: what Prism found wrong with the requests it received, except what is put
      apart with proof: prism_form_arrays (Prism reads repeated `name=value` pairs, and multipart
      JSON parts, as strings),
      spec_one_of_overlap (the body is valid for several branches of the spec's oneOf), prism_read_only
      (Prism requires a readOnly property in a request), spec_unsatisfiable (the spec's schema
      contradicts itself there: see `split_unsatisfiable`), and invalid_for_prism (Prism's 400/422
      for requests whose only violations are those);
    - python_refused / python_disagrees: the MCP Python SDK client refused a result, or saw another
      outcome than the TypeScript client;
    - strict_passes, strict_refused, strict_schema_failures, strict_listed_differs, strict_disagrees:
      the same calls through each of `passes` (other strict clients and transports, see
      `strict_clients`), and what they refused or saw otherwise than the reference pass.
    """

    with prism(spec.resolve()) as base, recording_proxy(base) as proxy:
        command = [sys.executable, "-m", module, "--base-url", proxy.url]
        env = {"PYTHONPATH": str(src), **env}
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True, compile_schemas=True, timeout=timeout)
        calls = synthesize_calls(listed["tool_list"])
        run = run_ts_client(command, env, calls, timeout=timeout)
        _require_alive(base, "the TypeScript client's calls")
        python = python_client_calls(command, env, calls, timeout=timeout)
        _require_alive(base, "the Python client's calls")
        others = other_passes(command, env, calls, run, passes, timeout=timeout)
        _require_alive(base, f"the calls of {', '.join(others['passes']) or 'no other pass'}")
        base.settle()
        logged = base.violations("request")
    results = run["results"]
    # Prism's warnings (a deprecated parameter sent) are not invalid requests.
    warnings = [v for v in logged if v["severity"] != "error"]
    violations, form_arrays = split_form_array_violations(
        [v for v in logged if v["severity"] == "error"], proxy.exchanges
    )
    violations, overlapping = split_ambiguous_one_of(violations, results, proxy.exchanges, spec, src.parent)
    violations, read_only = split_read_only_required(violations, results, spec, src.parent)
    violations, read_only_body, overlapping_body = split_valid_bodies(
        violations, results, proxy.exchanges, spec, src.parent
    )
    read_only, overlapping = read_only + read_only_body, overlapping + overlapping_body
    violations, unsatisfiable = split_unsatisfiable(violations, results, proxy.exchanges, spec, src.parent)
    violations, past_budget = split_past_budget(violations, results, listed["tool_list"])

    def text(r: dict[str, Any]) -> str:
        return r.get("text") or ""

    # Answers that are not usable HTTP: for httpx in the server, or already for the recording proxy.
    transport = [
        r["name"]
        for r in results
        if r["isError"] and (text(r).startswith("upstream request failed:") or "recording proxy: " in text(r))
    ]
    operations = _tool_operations(src.parent)
    unanswered = [
        r["name"]
        for r in results
        if r["isError"]
        and r["name"] not in transport
        and (
            any(marker in text(r) for marker in PRISM_CANNOT_ANSWER)
            or not _declares_success(spec, operations.get(r["name"]))
        )
    ]
    refused = [r for r in results if r["isError"] and "upstream response does not match" in text(r)]
    # Each answer the server refused, checked against the spec's own response schema: off-spec when
    # the spec refuses it too (Prism serves the spec's examples, which are often wrong); when the spec
    # accepts it, the generated model is stricter than the spec, a bug.
    verdicts = {r["name"]: judge_answer(spec, src.parent, r, proxy.exchanges) for r in refused}
    off_spec = [name for name, verdict in verdicts.items() if verdict.startswith("off-spec")]
    stricter = [(name, verdict) for name, verdict in verdicts.items() if not verdict.startswith("off-spec")]
    email_format = [r["name"] for r in results if r["isError"] and 'must match format \\"email\\"' in text(r)]
    # Prism answers 422 to a request it finds invalid; when every violation of that request was put
    # apart above (Prism's form-array reading, a spec's unsatisfiable oneOf), so is the error.
    # (Prism's own problem document, or the spec's example of a 400/422 answer.)
    put_apart = {v["request"] for v in form_arrays + overlapping + read_only + unsatisfiable + past_budget} - {
        v.get("request") for v in violations
    }
    invalid_for_prism = [
        r["name"]
        for r in results
        if r["isError"]
        and _request_of(r) in put_apart
        and ("UNPROCESSABLE_ENTITY" in text(r) or _status_of(r) in (400, 422))
    ]
    # A tool whose inputSchema the schema budget trimmed shows deep parts as open placeholders: the
    # arguments made from them can be what the server's full argument model refuses, naming the field.
    trimmed = json.loads((src.parent / "typed-mcp.json").read_text()).get("schema_budget", {}).get("trimmed", {})
    beyond_budget = [
        r["name"] for r in results if r["isError"] and r["name"] in trimmed and ARGUMENTS_REFUSED.search(text(r))
    ]
    explained = set(
        unanswered + [r["name"] for r in refused] + email_format + transport + invalid_for_prism + beyond_budget
    )
    return {
        "tools": run["tools"],
        "listed": len(listed["tool_list"]),
        "schemas_compiled": listed["schemas"]["compiled"],
        "schema_failures": listed["schemas"]["failures"],
        "outputs": sum(1 for t in listed["tool_list"] if t.get("outputSchema")),
        "ok": sum(1 for r in results if r["ok"] and not r["isError"]),
        "protocol_errors": [(r["name"], r["errorCode"], r["error"]) for r in results if r["errorCode"] is not None],
        "prism_cannot_answer": unanswered,
        "off_spec": off_spec,
        "off_spec_examples_why": [verdicts[name] for name in off_spec[:3]],
        "model_stricter": stricter,
        "email_format": email_format,
        "transport_failures": transport,
        "beyond_budget": beyond_budget,
        "other_errors": [(r["name"], text(r)[:300]) for r in results if r["isError"] and r["name"] not in explained],
        "raised": [(r["name"], r["error"]) for r in results if not r["ok"] and r["errorCode"] is None],
        "request_violations": violations,
        "prism_form_arrays": form_arrays,
        "spec_one_of_overlap": overlapping,
        "prism_read_only": read_only,
        "spec_unsatisfiable": unsatisfiable,
        "past_budget_requests": past_budget,
        "prism_warnings": warnings,
        "invalid_for_prism": invalid_for_prism,
        # The same calls through the MCP Python SDK's Client (it checks structuredContent with jsonschema):
        # refusals, and tools whose outcome (result or error) differs from the TypeScript client's.
        "python_refused": [(name, error) for name, (is_error, error) in python.items() if error is not None],
        "python_disagrees": sorted(
            r["name"] for r in results if r["ok"] and python.get(r["name"], (None, None))[0] is not r["isError"]
        ),
        **{f"strict_{key}": value for key, value in others.items()},
    }


@dataclass
class Exchange:
    method: str
    target: str  # path and query, as sent
    status: int
    content_type: str
    body: bytes
    request_type: str = ""  # the request's content-type
    request_body: bytes = b""


class RecordingProxy:
    url: str
    exchanges: list[Exchange]
    seen: list[Seen]  # every request as it reached the proxy, headers included


@contextlib.contextmanager
def recording_proxy(target: str) -> Iterator[RecordingProxy]:
    """A real HTTP server on 127.0.0.1 that forwards every request to `target` and records each
    answer, so that a refused answer can be judged afterwards against the spec."""
    import httpx

    proxy = RecordingProxy()
    proxy.exchanges = []
    client = httpx.Client(base_url=target, timeout=120)
    hop = {"host", "content-length", "connection", "transfer-encoding", "accept-encoding"}

    def forward(seen: Seen) -> Reply:
        headers = {k: v for k, v in seen.headers.items() if k not in hop}
        try:
            answer = client.request(seen.method, seen.raw_path, headers=headers, content=seen.body)
        except httpx.HTTPError as exc:  # the target is gone (a crashed mock): a gateway error, as a real proxy gives
            return Reply(502, f"recording proxy: {type(exc).__name__}", "text/plain")
        content_type = answer.headers.get("content-type", "")
        proxy.exchanges.append(
            Exchange(
                seen.method,
                seen.raw_path,
                answer.status_code,
                content_type,
                answer.content,
                seen.headers.get("content-type", ""),
                seen.body,
            )
        )
        return Reply(answer.status_code, answer.content, content_type)

    with client, HttpServer() as server:
        server.default = forward
        proxy.url, proxy.seen = server.url, server.seen
        yield proxy


_FORM_ARRAY = re.compile(r"^Request body property (?P<name>.+?) must be array$")
_FORM_OBJECT = re.compile(r"^Request body property (?P<name>.+?) must be (?:object|array)$")
_FORM_REQUIRED = re.compile(r"^Request body must have required property '(?P<name>[^']+)'$")
_QUERY_ARRAY = re.compile(
    r"^Request query parameter (?P<name>\S+) must (?P<what>be array|be null|match a schema in anyOf|match exactly one schema in oneOf)$"
)


def split_form_array_violations(
    violations: list[dict[str, str]], exchanges: list[Exchange]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, Prism's own array limitations). An array property of a form body goes on the wire
    as repeated keys (OpenAPI's default: style form, explode true: `tag=a&tag=b`), and Prism reads one
    or more repeated keys as a string (stoplightio/prism#2473, fix proposed in #2654); an array query
    parameter inside `anyOf` is read as a string too. A multipart part holding JSON (OpenAPI's default
    for an object or array property, sent with `content-type: application/json`) stays a string too:
    Prism's multipart reader keeps every part's text and ignores its content type. And Prism's form
    reader keeps only the fields the schema declares under `properties`, so a required field that is
    only listed in `required` (Box's `grant_type`) reads as missing. An array of files sent as one
    part (Cloudflare's worker upload, `<any part name>`) reads as a string the same way. Such a
    violation is put apart only when the request really sent that field that way; anything else
    stays one."""
    from urllib.parse import parse_qsl, urlsplit

    kept, limitation = [], []
    # Query parameters: an array inside `anyOf [array, null]` (OpenAPI 3.1's nullable, Airflow's
    # update_mask) is not deserialized by Prism at all, which then reads `update_mask=a` as a string.
    arrays_in_query = {
        (v.get("request"), m["name"])
        for v in violations
        if (m := _QUERY_ARRAY.match(v["message"])) and m["what"] == "be array"
    }
    for violation in violations:
        sent = _sent_for(violation.get("request", ""), exchanges)
        if (match := _FORM_ARRAY.match(violation["message"]) or _FORM_REQUIRED.match(violation["message"])) is not None:
            forms = [e for e in sent if e.request_type.startswith("application/x-www-form-urlencoded")]
            pairs = [dict(parse_qsl(e.request_body.decode("utf-8", "replace"), keep_blank_values=True)) for e in forms]
            # multipart/form-data: one part per item, `name="..."` (Prism reads those the same way)
            pairs += [
                {match["name"]: ""}
                for e in sent
                if e.request_type.startswith("multipart/form-data")
                and f'name="{match["name"]}"'.encode() in e.request_body
            ]
        elif (match := _FORM_OBJECT.match(violation["message"])) is not None:
            pairs = [
                {match["name"]: ""}
                for e in sent
                if e.request_type.startswith("multipart/form-data")
                and _json_part(e.request_body, e.request_type, match["name"])
            ]
        elif (match := _QUERY_ARRAY.match(violation["message"])) is not None and (
            violation.get("request"),
            match["name"],
        ) in arrays_in_query:
            pairs = [dict(parse_qsl(urlsplit(e.target).query, keep_blank_values=True)) for e in sent]
        else:
            pairs = []
        (limitation if match and any(match["name"] in p for p in pairs) else kept).append(violation)
    return kept, limitation


def _json_part(body: bytes, content_type: str, name: str) -> bool:
    """Whether a multipart/form-data body has a part `name` sent as JSON holding an object or array."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(f"content-type: {content_type}\r\n\r\n".encode() + body)
    for part in message.iter_parts() if message.is_multipart() else []:
        if (
            part.get_param("name", header="content-disposition") == name
            and part.get_content_type() == "application/json"
        ):
            try:
                return isinstance(json.loads(part.get_payload(decode=True) or b""), (dict, list))
            except ValueError:
                return False
    return False


@functools.lru_cache(maxsize=1)
def _strict_client_formats() -> Any:
    """Format checks as the strict clients make them (ajv-formats, full mode): the runtime's ports
    of its rules (date-time, date, time, duration, uuid, ipv4, ipv6, uri-reference, email), and
    `uri` and `byte` read from ajv-formats itself. jsonschema's own checks differ (its `email` only
    looks for an "@") or are missing (`duration`, `byte` and `uri` without extra packages), and the
    judge would then call a refusal of an off-spec answer a model stricter than the spec."""

    import jsonschema

    from harness.runtime_loader import runtime as runtime_module

    runtime = runtime_module("formats")
    rules: dict[str, Any] = {**runtime.STRICT_FORMATS, "email": lambda text: runtime.EMAIL.fullmatch(text) is not None}
    source = (NODE_DIR / "node_modules" / "ajv-formats" / "dist" / "formats.js").read_text()
    uri = re.compile(re.search(r"^const URI = /\^(.*)\$/i;$", source, re.MULTILINE).group(1), re.ASCII | re.IGNORECASE)
    byte = re.compile(re.search(r"^const BYTE = /(.*)/gm;$", source, re.MULTILINE).group(1), re.ASCII | re.MULTILINE)
    rules["uri"] = lambda text: re.search(r"/|:", text) is not None and uri.fullmatch(text) is not None
    rules["byte"] = lambda text: byte.search(text) is not None
    checker = jsonschema.FormatChecker()
    for name, rule in rules.items():
        checker.checks(name)(lambda value, rule=rule: not isinstance(value, str) or bool(rule(value)))
    return checker


def _sent_for(request: str, exchanges: list[Exchange]) -> list[Exchange]:
    """The recorded exchanges of a request "METHOD /path" (as a violation names it, or `_request_of`)."""
    from urllib.parse import urlsplit

    method, _, path = request.partition(" ")
    return [e for e in exchanges if e.method == method and urlsplit(e.target).path == path]


def _declares_success(spec: Path, operation: str | None) -> bool:
    """Whether the spec declares a success (2xx, `2XX` or `default`) for `operation`; True when unknown."""

    if not operation:
        return True
    return any(str(code).startswith("2") or code == "default" for code in spec_responses(spec, operation))


def _tool_operations(project: Path) -> dict[str, str]:
    """Tool name -> the spec's operation ("GET /pets/{id}"), from the generated project's manifest."""
    return json.loads((project / "typed-mcp.json").read_text())["tools"]


def _operations_by_request(results: list[dict[str, Any]], project: Path) -> dict[str, str]:
    """ "METHOD /path" as sent -> the spec's operation ("GET /pets/{id}") of the tool that sent it."""
    tools = _tool_operations(project)
    return {_request_of(r): tools.get(r["name"], "") for r in results}


def _json_body(
    request: str, operation: str | None, exchanges: list[Exchange], spec: Path
) -> tuple[Any, dict[str, Any]] | None:
    """The JSON body last sent for `request` (of the spec's `operation`) and the spec's schema for
    it; None when no JSON body was sent, it does not parse, or the spec has no schema for it."""

    sent = [e for e in _sent_for(request, exchanges) if "json" in e.request_type]
    schema = spec_request_schema(spec, operation, sent[-1].request_type) if sent and operation else None
    if schema is None:
        return None
    try:
        return json.loads(sent[-1].request_body), schema
    except ValueError:
        return None


def _status_of(result: dict[str, Any]) -> int | None:
    return (((result.get("meta") or {}).get(SOURCE_META)) or {}).get("status")


def _request_of(result: dict[str, Any]) -> str:
    """ "METHOD /path" of the upstream request behind a tool result (from its provenance)."""
    from urllib.parse import urlsplit

    source = ((result.get("meta") or {}).get(SOURCE_META)) or {}
    return f"{source.get('method')} {urlsplit(source.get('url') or '').path}"


_ONE_OF = re.compile(r"^Request body (?:property (?P<name>\S+) )?must match exactly one schema in oneOf$")
_PARAMETER_ONE_OF = re.compile(
    r"^Request (?P<where>path|query) parameter (?P<name>\S+) must match exactly one schema in oneOf$"
)


def split_ambiguous_one_of(
    violations: list[dict[str, str]],
    results: list[dict[str, Any]],
    exchanges: list[Exchange],
    spec: Path,
    project: Path,
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, those where the body or parameter sent is valid for several branches of the
    spec's own `oneOf`). Zoom's PATCH /accounts/{id}/lock_settings body is `oneOf` two lists of
    optional properties without `type`: every object matches both, so no request can satisfy it;
    Cloudflare's `configuration` bodies overlap the same way, and its `app_id` is `oneOf` a string
    of at most 32 characters and one of at most 36. Put apart only when the recorded value, checked
    against the spec's schema, matches two branches or more (a value that matches none stays a
    violation: that one would be ours)."""

    operation_of = _operations_by_request(results, project)
    kept, ambiguous = [], []
    for violation in violations:
        request = violation.get("request", "")
        operation = operation_of.get(request)
        branches_matched = 0
        if (match := _ONE_OF.match(violation["message"])) and (
            found := _json_body(request, operation, exchanges, spec)
        ):
            body, schema = found
            with contextlib.suppress(KeyError, TypeError):
                branches_matched = _branches_matched(schema, body, match["name"])
        elif (match := _PARAMETER_ONE_OF.match(violation["message"])) and operation:
            sent = _sent_for(request, exchanges)
            value = _parameter_sent(operation, sent[-1].target, match["where"], match["name"]) if sent else None
            schema = spec_parameter_schema(spec, operation, match["where"], match["name"])
            if value is not None and schema is not None:
                branches_matched = _branches_matched(schema, value, None)
        (ambiguous if branches_matched >= 2 else kept).append(violation)
    return kept, ambiguous


_BODY_PROPERTY = re.compile(r"^Request body property (?P<name>\S+) ")
PLACEHOLDER = "(not expanded here)"  # what the schema budget (catalog/budget.py) writes in a placeholder


def split_past_budget(
    violations: list[dict[str, str]], results: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, those in a request body at a part the tool's published inputSchema shows as a
    schema budget placeholder: an open object standing for a model, from which the client made its
    value without knowing the model)."""
    schemas = {tool["name"]: tool.get("inputSchema") or {} for tool in tools}
    tool_of = {_request_of(r): r["name"] for r in results}
    kept, past = [], []
    for violation in violations:
        match = _BODY_PROPERTY.match(violation["message"])
        schema = schemas.get(tool_of.get(violation.get("request", ""), ""))
        under = match is not None and schema is not None and _under_placeholder(schema, match["name"].split("."))
        (past if under else kept).append(violation)
    return kept, past


def _under_placeholder(schema: dict[str, Any], steps: list[str]) -> bool:
    """Whether the body's instance path `steps` reaches, in the tool's inputSchema, a placeholder."""
    defs = schema.get("$defs") or {}

    def resolved(node: Any) -> Any:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            node = defs.get(node["$ref"][len("#/$defs/") :])
        return node

    def placeholder(node: Any) -> bool:
        node = resolved(node)
        if not isinstance(node, dict):
            return False
        if PLACEHOLDER in str(node.get("description", "")):
            return True
        return any(placeholder(branch) for key in ("anyOf", "oneOf", "allOf") for branch in node.get(key) or [])

    nodes = [resolved((schema.get("properties") or {}).get("body"))]
    for step in steps:
        if any(placeholder(node) for node in nodes):
            return True
        following = []
        for node in nodes:
            node = resolved(node)
            if not isinstance(node, dict):
                continue
            for branch in [node, *(resolved(b) for key in ("anyOf", "oneOf", "allOf") for b in node.get(key) or [])]:
                if not isinstance(branch, dict):
                    continue
                if step.isdigit() and isinstance(branch.get("items"), dict):
                    following.append(branch["items"])
                elif step in (branch.get("properties") or {}):
                    following.append(branch["properties"][step])
        nodes = following
    return any(placeholder(node) for node in nodes)


def _parameter_sent(operation: str, target: str, where: str, name: str) -> str | None:
    """The value of the path or query parameter `name` in a recorded request target, as text."""
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(target)
    if where == "query":
        values = parse_qs(parts.query).get(name)
        return values[-1] if values else None
    pieces = re.split(r"(\{[^}]+\})", operation.split(" ", 1)[1])
    placeholder = {i: piece[1:-1] for i, piece in enumerate(pieces) if piece.startswith("{")}
    found = re.fullmatch(
        "".join(f"(?P<p{i}>[^/]+)" if i in placeholder else re.escape(piece) for i, piece in enumerate(pieces)),
        parts.path,
    )
    for i, declared in placeholder.items():
        if found and declared.lower() == name.lower():  # Prism names path parameters in lower case
            return unquote(found.group(f"p{i}"))
    return None


_REQUIRED = re.compile(r"^Request body (?:property (?P<path>\S+) )?must have required property '(?P<name>[^']+)'$")


def split_read_only_required(
    violations: list[dict[str, str]], results: list[dict[str, Any]], spec: Path, project: Path
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, Prism requiring a readOnly property in a request). OpenAPI: a property that is
    readOnly and required is required in responses only, and the tools leave readOnly properties
    out of requests; Prism still requires them inside arrays (Cloudflare's rulesets: `rules[].version`,
    `rules[].last_updated`). Put apart only when the spec's own schema, at that place, marks the
    property readOnly."""

    operation_of = _operations_by_request(results, project)
    kept, read_only = [], []
    for violation in violations:
        match = _REQUIRED.match(violation["message"])
        operation = operation_of.get(violation.get("request", ""))
        schema = spec_request_schema(spec, operation, "application/json") if match and operation else None
        node = _at(schema, (match["path"] or "").split(".") if match and match["path"] else []) if schema else None
        prop = _at(node, [match["name"]], schema) if node is not None and match else None
        (read_only if isinstance(prop, dict) and prop.get("readOnly") is True else kept).append(violation)
    return kept, read_only


def split_valid_bodies(
    violations: list[dict[str, str]],
    results: list[dict[str, Any]],
    exchanges: list[Exchange],
    spec: Path,
    project: Path,
) -> tuple[list[dict[str, str]], list[dict[str, str]], list[dict[str, str]]]:
    """(violations, those of bodies valid for the spec read the OpenAPI way, and those of bodies valid
    but for `oneOf`s several of whose branches they match). Prism lists, for one item of a `oneOf`
    that fails, the failure of every branch: Cloudflare's rule `{"action": "block", ...}`, refused
    for its readOnly `version`, came with `action must be equal to challenge`, `... to log` and a
    `minProperties` of another branch, one line each. So a request is judged whole: its recorded
    JSON body is checked against the spec's schema with readOnly properties not required (as OpenAPI
    says for requests), formats checked as the strict clients check them; if valid, every body
    violation of that request is Prism's readOnly rule. If valid only when a `oneOf` may match
    several branches, they are the spec's ambiguity."""
    import jsonschema
    import referencing.exceptions

    operation_of = _operations_by_request(results, project)
    verdicts: dict[str, str] = {}
    for request in {v.get("request", "") for v in violations if v["message"].startswith("Request body")}:
        if (found := _json_body(request, operation_of.get(request), exchanges, spec)) is None:
            continue
        body, schema = found
        for verdict, relaxed in (
            ("read_only", _openapi_request(schema, any_of=False)),
            ("overlap", _openapi_request(schema, any_of=True)),
        ):
            with contextlib.suppress(
                jsonschema.exceptions.SchemaError, referencing.exceptions.Unresolvable, RecursionError
            ):
                if jsonschema.Draft202012Validator(relaxed, format_checker=_strict_client_formats()).is_valid(body):
                    verdicts[request] = verdict
                    break
    kept, read_only, overlap = [], [], []
    for violation in violations:
        verdict = (
            verdicts.get(violation.get("request", "")) if violation["message"].startswith("Request body") else None
        )
        (read_only if verdict == "read_only" else overlap if verdict == "overlap" else kept).append(violation)
    return kept, read_only, overlap


def _openapi_request(schema: dict[str, Any], *, any_of: bool) -> dict[str, Any]:
    """`schema` (with its `$defs`) as OpenAPI reads it for a request: a readOnly property is not
    required, also where an `allOf` part requires what another part declares readOnly (the parts
    are inlined for that); with `any_of`, each `oneOf` is an `anyOf` (a value may match several)."""
    defs = schema.get("$defs", {})

    def read_only_names(node: Any) -> set[str]:
        node = _local(node, defs)
        properties = node.get("properties") if isinstance(node, dict) else None
        return {
            name
            for name, prop in (properties or {}).items()
            if isinstance(_local(prop, defs), dict) and _local(prop, defs).get("readOnly") is True
        }

    def walk(node: Any, inherited: frozenset[str], depth: int) -> Any:
        if depth > 64:
            return node
        if isinstance(node, list):
            return [walk(item, frozenset(), depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        parts = node.get("allOf") if isinstance(node.get("allOf"), list) else []
        names = inherited | read_only_names(node) | {n for part in parts for n in read_only_names(part)}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("enum", "const", "default", "examples", "example"):
                out[key] = value
            elif key == "allOf" and isinstance(value, list):
                out[key] = [walk(_local(part, defs), frozenset(names), depth + 1) for part in value]
            else:
                out["anyOf" if any_of and key == "oneOf" else key] = walk(value, frozenset(), depth + 1)
        if isinstance(out.get("required"), list):
            out["required"] = [n for n in out["required"] if n not in names]
        return out

    return walk(schema, frozenset(), 0)


_ENUM = re.compile(
    r"^Request (?:body property (?P<prop>\S+)|(?P<where>query|path|header|cookie) parameter (?P<param>\S+)) must be equal to one of the allowed values"
)
_OBJECT_BODY = re.compile(r"^Request body must be (?:object|array)$")
_CONTENT_TYPES = re.compile(r"^Supported content types: (?P<types>.+)$")


def split_unsatisfiable(
    violations: list[dict[str, str]],
    results: list[dict[str, Any]],
    exchanges: list[Exchange],
    spec: Path,
    project: Path,
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, those no request could avoid because the spec contradicts itself). Put apart,
    with the spec's own schema as proof, only: an `enum` none of whose values has the declared type
    (Zoom's `type: string, enum: [1, 2]`, GitLab's `type: array` with an enum of strings), a path or
    query parameter without `type` whose enum has no string (Cloudflare's `ssl:
    {enum: [0, 1]}`, `retry: {enum: [true]}`: a parameter is text, and without a type a validator has
    nothing to read `0` as, so no value can match; put apart when the text sent is one of the
    values written as JSON), an object
    schema declared for a body whose media type has no structure (Docker's `application/octet-stream`
    with `type: object`: a validator reads such a body as text), and a `Content-Type` header
    parameter fixed to another media type than the request body's (Docker's `POST /build`: header
    `application/x-tar`, body `application/octet-stream`; the request sent the header's)."""

    operation_of = _operations_by_request(results, project)
    kept, unsatisfiable = [], []
    for violation in violations:
        operation = operation_of.get(violation.get("request", ""))
        sent = _sent_for(violation.get("request", ""), exchanges)
        proof = False
        if operation and (match := _ENUM.match(violation["message"])) is not None:
            if match["prop"]:
                root = spec_request_schema(spec, operation, sent[-1].request_type) if sent else None
                node = _at(root, match["prop"].split(".")) if root else None
            else:
                root = node = spec_parameter_schema(spec, operation, match["where"], match["param"])
            proof = node is not None and _enum_contradicts_type(node, root)
            if not proof and match["where"] in ("path", "query") and node is not None and sent:
                proof = _untyped_enum_sent(
                    node, _parameter_sent(operation, sent[-1].target, match["where"], match["param"])
                )
        elif operation and (match := _CONTENT_TYPES.match(violation["message"])) is not None and sent:
            media = media_type(sent[-1].request_type)
            header = spec_parameter_schema(spec, operation, "header", "Content-Type") or {}
            fixed = header.get(
                "const", (header.get("enum") or [None])[0] if len(header.get("enum") or []) == 1 else None
            )
            proof = fixed == media and media not in [t.strip().lower() for t in match["types"].split(",")]
        elif operation and _OBJECT_BODY.match(violation["message"]) and sent:
            media = media_type(sent[-1].request_type)
            schema = spec_request_schema(spec, operation, media)
            structured = "json" in media or media in ("application/x-www-form-urlencoded", "multipart/form-data")
            proof = not structured and isinstance(schema, dict) and schema.get("type") in ("object", "array")
        (unsatisfiable if proof else kept).append(violation)
    return kept, unsatisfiable


def _untyped_enum_sent(node: dict[str, Any], sent: str | None) -> bool:
    """Whether a parameter's schema has no type and no string in its enum, and `sent` is one of its
    values written as JSON (`0`, `true`)."""
    values = node.get("enum")
    return (
        "type" not in node
        and isinstance(values, list)
        and sent is not None
        and not any(isinstance(v, str) for v in values)
        and sent in [json.dumps(v) for v in values]
    )


def _enum_contradicts_type(node: Any, root: Any) -> bool:
    """Whether a schema's `enum` lists no value that the rest of the schema accepts."""
    import jsonschema

    node = _local(node, (root or {}).get("$defs", {}))
    values = node.get("enum") if isinstance(node, dict) else None
    if not isinstance(values, list) or not values:
        return False
    rest = {k: v for k, v in node.items() if k not in ("enum", "const", "default", "example", "examples")}
    if "$defs" in (root or {}):
        rest["$defs"] = root["$defs"]
    return not any(jsonschema.Draft202012Validator(rest).is_valid(value) for value in values)


def _local(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with its `$ref`s into `$defs` (as `to_json_schema` writes them) followed."""
    for _ in range(32):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        node = defs.get(node["$ref"].rsplit("/", 1)[-1])
    return node


def _at(node: Any, path: list[str], root: dict[str, Any] | None = None) -> Any:
    """The schema at a dotted instance path (`rules.0`) in a JSON Schema made by `to_json_schema`,
    looking through `$ref`s and into `allOf`/`anyOf`/`oneOf` parts (the first that has the step)."""
    root = root if root is not None else node
    defs = (root or {}).get("$defs", {})

    def resolve(n: Any) -> Any:
        return _local(n, defs)

    def parts(n: Any, depth: int = 0) -> list[dict[str, Any]]:
        n = resolve(n)
        if not isinstance(n, dict) or depth > 8:
            return []
        found = [n]
        for key in ("allOf", "anyOf", "oneOf"):
            for part in n.get(key) or []:
                found += parts(part, depth + 1)
        return found

    for step in path:
        candidates = parts(node)
        if step.isdigit():
            node = next((resolve(p["items"]) for p in candidates if isinstance(p.get("items"), dict)), None)
        else:
            node = next(
                (resolve(p["properties"][step]) for p in candidates if step in (p.get("properties") or {})), None
            )
        if node is None:
            return None
    return node


def _branches_matched(schema: dict[str, Any] | None, body: Any, name: str | None) -> int:
    """How many branches of the `oneOf` at the body's root (or at its dotted instance path `name`,
    `rules.0`) the value there is valid for."""
    import jsonschema

    defs = (schema or {}).get("$defs", {})
    path = name.split(".") if name else []
    node, value = _local(_at(schema, path) if path else schema, defs), body
    for step in path:
        if isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return 0
    if not isinstance(node, dict) or not isinstance(node.get("oneOf"), list):
        return 0
    return sum(
        jsonschema.Draft202012Validator({**branch, "$defs": defs} if isinstance(branch, dict) else branch).is_valid(
            value
        )
        for branch in node["oneOf"]
    )


def judge_answer(spec: Path, project: Path, result: dict[str, Any], exchanges: list[Exchange]) -> str:
    """Why the server refused an upstream answer: "off-spec: ..." when the spec's own response
    schema refuses the answer too, else "model stricter than the spec: ..." (or why it could not
    be judged, which counts as unexplained)."""
    import jsonschema

    operation = _tool_operations(project).get(result["name"], "")
    sent = _sent_for(_request_of(result), exchanges)
    if not operation or not sent:
        return "not judged: the upstream answer was not recorded"
    answer = sent[-1]
    schema = spec_response_schema(spec, operation, answer.status, answer.content_type)
    if schema is None:
        return f"not judged: the spec has no JSON schema for HTTP {answer.status}"
    try:
        body = json.loads(answer.body)
    except ValueError:
        return "off-spec: not JSON"
    validator = jsonschema.Draft202012Validator(schema, format_checker=_strict_client_formats())
    error = next(iter(validator.iter_errors(body)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"off-spec: at {where}: {error.message[:200]}"
    return "model stricter than the spec: " + (result.get("text") or "")[:300]


def _require_alive(base: PrismURL, during: str) -> None:
    """Calls to a Prism that died are refused connections, not answers: such a run says nothing."""
    if base.process.poll() is not None:
        lines = base.log().splitlines()
        last = next((line for line in reversed(lines) if REQUEST_LINE.search(line)), "no request logged")
        error = next(
            (line.strip() for line in reversed(lines) if "Error" in line and not line.strip().startswith("at ")), ""
        )
        raise NodeToolsError(
            f"Prism exited (code {base.process.returncode}) during {during}, on {last.split('[HTTP SERVER]')[-1].strip()}: {error[:300]}"
        )


def python_client_calls(
    command: list[str], env: dict[str, str], calls: list[dict[str, Any]], *, timeout: float
) -> dict[str, tuple[bool | None, str | None]]:
    """Each call through the MCP Python SDK `Client` over stdio: name -> (isError, None), or
    (None, the exception) when the client raised (e.g. structuredContent not matching the outputSchema)."""
    import anyio
    from mcp import Client, StdioServerParameters

    async def run() -> dict[str, tuple[bool | None, str | None]]:
        outcome: dict[str, tuple[bool | None, str | None]] = {}
        params = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, **env})
        async with Client(params, read_timeout_seconds=timeout) as client:
            await list_all_tools(client)  # every page, so the client knows every tool's outputSchema
            for call in calls:
                try:
                    result = await client.call_tool(call["name"], call["arguments"])
                    outcome[call["name"]] = (bool(result.is_error), None)
                except Exception as exc:  # recorded: a refusal is what this run is looking for
                    outcome[call["name"]] = (None, f"{type(exc).__name__}: {str(exc)[:300]}")
        return outcome

    return anyio.run(run)
