"""Node-side tools: the official TypeScript MCP SDK as a strict client and Prism as a mock upstream.

Used by the tests and by `typed-mcp corpus` (in a checkout of this repository: they are
development tools, not part of the generator's wheel). Both live in tests/node (package.json +
package-lock.json, exact versions); `npm_install()` runs `npm ci` there when node_modules is
missing or does not match the lock file.

- `run_ts_client(server_cmd, env, calls)` runs tests/node/mcp_client.mjs: the SDK's `Client`
  lists every tool and calls each one with `client.callTool`, which checks structuredContent
  against the tool's outputSchema (AJV): McpError -32602 on a mismatch, -32600 when a tool with an
  outputSchema returns no structuredContent.
- `prism(spec, port)` serves a mock of an OpenAPI document with Prism and captures its log;
  `prism_violations(log)` extracts what Prism found wrong with the requests it received.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.demo.process import free_port, stop

NODE_DIR = Path(__file__).resolve().parent.parent / "tests" / "node"
CLIENT = NODE_DIR / "mcp_client.mjs"
CONTROL_SERVER = NODE_DIR / "control_server.mjs"
PRISM_BIN = NODE_DIR / "node_modules" / ".bin" / "prism"

INVALID_PARAMS = -32602  # callTool: structuredContent does not match the outputSchema
INVALID_REQUEST = -32600  # callTool: a tool with an outputSchema returned no structuredContent


class NodeToolsError(RuntimeError):
    pass


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise NodeToolsError(
            f"`{program}` is not on PATH: tests/test_ts_client.py needs Node.js 18+ and npm "
            f"(it installs tests/node/package-lock.json into tests/node/node_modules with `npm ci`)"
        )
    return path


def _installed_matches_lock() -> bool:
    """True when node_modules holds exactly what package-lock.json pins (npm's own record of
    the installed tree, node_modules/.package-lock.json, agrees on every non-optional package)."""
    hidden = NODE_DIR / "node_modules" / ".package-lock.json"
    if not hidden.is_file() or not PRISM_BIN.exists():
        return False
    try:
        locked = json.loads((NODE_DIR / "package-lock.json").read_text())["packages"]
        installed = json.loads(hidden.read_text())["packages"]
        wanted = json.loads((NODE_DIR / "package.json").read_text())["dependencies"]
    except (OSError, ValueError, KeyError):
        return False
    if locked.get("", {}).get("dependencies") != wanted:
        raise NodeToolsError("tests/node/package.json and package-lock.json disagree: run `npm install` in tests/node and commit the lock file")
    for path, meta in locked.items():
        if not path or meta.get("optional"):
            continue
        if installed.get(path, {}).get("version") != meta.get("version"):
            return False
    return True


_installed = False


def npm_install() -> None:
    """`npm ci` in tests/node unless node_modules already matches package-lock.json."""
    global _installed
    if _installed:
        return
    _require("node")
    npm = _require("npm")
    if not _installed_matches_lock():
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR, capture_output=True, text=True, timeout=600,
        )
        if proc.returncode != 0:
            raise NodeToolsError(f"`npm ci` in {NODE_DIR} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        if not _installed_matches_lock():
            raise NodeToolsError(f"`npm ci` in {NODE_DIR} did not produce the locked tree")
    _installed = True


def run_ts_client(
    server_cmd: list[str] | None,
    env: dict[str, str] | None = None,
    calls: list[dict[str, Any]] | None = None,
    list_only: bool = False,
    timeout: float = 180.0,
    *,
    url: str | None = None,
    dump_tools: bool = False,
    compile_schemas: bool = False,
    request_timeout_ms: int = 60000,
) -> dict[str, Any]:
    """Run the TypeScript SDK client against `server_cmd` (stdio; the server inherits this
    process's environment plus `env`) or against a streamable-HTTP `url`.

    Returns {"tools", "listed_bytes", "results": [{"name", "ok", "isError", "errorCode",
    "error", "errorType", "structuredContent", "text"}], "stderr"} (+ "tool_list" with
    `dump_tools`). Raises NodeToolsError when the client could not connect or list the tools."""
    npm_install()
    if (server_cmd is None) == (url is None):
        raise ValueError("give exactly one of server_cmd and url")
    with tempfile.TemporaryDirectory(prefix="ts-client-") as tmp:
        args = [_require("node"), str(CLIENT), "--timeout", str(request_timeout_ms)]
        if list_only:
            args.append("--list-only")
        else:
            calls_file = Path(tmp) / "calls.json"
            calls_file.write_text(json.dumps(calls or []))
            args += ["--calls", str(calls_file)]
        if dump_tools:
            args.append("--dump-tools")
        if compile_schemas:
            args.append("--compile-schemas")
        args += ["--url", url] if url is not None else ["--stdio", "--", *server_cmd]
        try:
            proc = subprocess.run(
                args, cwd=NODE_DIR, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise NodeToolsError(f"the TypeScript client did not finish within {timeout:g}s; stderr:\n{(exc.stderr or b'')[-3000:]!r}") from exc
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NodeToolsError(f"the TypeScript client exited with {proc.returncode}; stderr:\n{proc.stderr[-4000:]}")
    try:
        out = json.loads(proc.stdout)
    except ValueError as exc:
        raise NodeToolsError(f"the TypeScript client printed no JSON document: {proc.stdout[:2000]!r}") from exc
    out["stderr"] = proc.stderr
    return out


def ajv_accepts(cases: list[tuple[dict[str, Any], Any]]) -> list[bool]:
    """For each (schema, value): does the TypeScript SDK's own validator (AJV with ajv-formats, as its
    Client checks structuredContent) accept the value?"""
    npm_install()
    node = _require("node")
    with tempfile.TemporaryDirectory(prefix="typed-mcp-ajv-") as temp:
        path = Path(temp) / "cases.json"
        path.write_text(json.dumps([{"schema": schema, "value": value} for schema, value in cases]))
        done = subprocess.run([node, str(NODE_DIR / "ajv_check.mjs"), str(path)], cwd=NODE_DIR, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise NodeToolsError(f"ajv_check.mjs failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


# ---------------------------------------------------------------------------------------------
# Prism

class PrismURL(str):
    """Prism's base URL (a str), carrying the mock's captured log."""

    log_lines: list[str]
    process: subprocess.Popen[str]
    hidden: list[range]  # lines of `settle` marker requests, not part of the test's traffic

    def log(self) -> str:
        lines = list(self.log_lines)
        return "\n".join(line for i, line in enumerate(lines) if not any(i in r for r in self.hidden))

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until Prism has logged every request it received so far. Its log is written in
        order, so once the answer to a marker request is logged, every earlier line is there too.
        Reading the log without this can miss the last request's violations: a test that passes
        for the wrong reason."""
        import httpx

        marker = f"/typed-mcp-settle-{uuid.uuid4().hex}"
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(self + marker, timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            lines = list(self.log_lines)
            start = next((i for i, line in enumerate(lines) if marker in line), None)
            end = next((i for i in range(start, len(lines)) if _TERMINATED.search(lines[i])), None) if start is not None else None
            if end is not None:
                self.hidden.append(range(start, end + 1))
                return
            if time.monotonic() > deadline:
                raise NodeToolsError(f"Prism did not log the marker request within {timeout:g}s:\n{self.log()[-3000:]}")
            time.sleep(0.05)

    def violations(self, where: str = "request") -> list[dict[str, str]]:
        return prism_violations(self.log(), where)

    def requests(self) -> list[tuple[str, str]]:
        return prism_requests(self.log())

    def errors(self) -> list[str]:
        return prism_errors(self.log())


@contextlib.contextmanager
def prism(spec_path: str | Path, port: int | None = None, dynamic: bool = False, *, seed: str | None = None,
          startup_timeout: float = 60.0) -> Iterator[PrismURL]:
    """`prism mock SPEC --host 127.0.0.1 --port PORT [-d]`; yields its base URL (a PrismURL whose
    `log_lines` fill up while it runs) once it accepts connections; terminates it on exit."""
    npm_install()
    port = port or free_port()
    args = [str(PRISM_BIN), "mock", str(spec_path), "--host", "127.0.0.1", "--port", str(port)]
    if dynamic:
        args.append("-d")
    if seed is not None:
        args += ["--seed", seed]
    # Big specs (Cloudflare's 14 MB) outgrow node's default heap once Prism has dereferenced them.
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0",
           "NODE_OPTIONS": (os.environ.get("NODE_OPTIONS", "") + " --max-old-space-size=8192").strip()}
    proc = subprocess.Popen(args, cwd=NODE_DIR, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
    url = PrismURL(f"http://127.0.0.1:{port}")
    url.process = proc
    url.log_lines = []
    url.hidden = []
    listening = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            url.log_lines.append(line.rstrip("\n"))
            if "Prism is listening on" in line:
                listening.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                reader.join(5)
                raise NodeToolsError(f"prism exited with {proc.returncode} before listening:\n{url.log()[-4000:]}")
            if time.monotonic() > deadline:
                raise NodeToolsError(f"prism did not listen on {url} within {startup_timeout:g}s:\n{url.log()[-4000:]}")
            if listening.is_set():
                # A bare TCP connect: an HTTP probe would be a request of its own in the log.
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            time.sleep(0.1)
        yield url
    finally:
        time.sleep(0.3)  # let the last request's log lines arrive
        stop(proc)
        reader.join(5)


# Prism (5.x) logs each violation it finds as one line, at the violation's severity, e.g.
#   [2:54:20 AM] ›     [VALIDATOR] ✖  error     Violation: request.query.limit Request query parameter limit must be integer
#   [2:54:20 AM] ›     [VALIDATOR] ✖  error     Violation: request.body Request body must have required property 'name'
# (prism-http-server: `Violation: ${location.join('.')} ${message}`, location starting with
# "request" or "response"). When no response in the spec describes the failure, Prism answers 422
# itself and logs the violations without the prefix and without a location:
#   [6:10:21 AM] ›     [VALIDATOR] ✖  error     Request path parameter sid must match pattern "^AC[0-9a-fA-F]{32}$"
# Those count too (location: "request" or "response", from the message); the summary lines
# ("Request did not pass the validation rules", at warning level) do not.
_VIOLATION = re.compile(
    r"\[VALIDATOR\]\s+\S+\s+(?P<severity>error|warning|info)\s+"
    r"(?:Violation: (?P<location>\S*) (?P<message>.*)|(?P<bare>(?P<side>Request|Response) (?!did not pass the validation rules).*))$"
)
_REQUEST = re.compile(r"\[HTTP SERVER\] (?P<method>[a-z]+) (?P<path>\S+) \S+\s+info\s+Request received")
_TERMINATED = re.compile(r"Request terminated with error: (?P<message>.*)$")


def prism_violations(log: str, where: str = "request") -> list[dict[str, str]]:
    """The violations Prism logged for requests (`where="request"`) or for its own responses
    (`"response"`): [{"severity", "location", "message", "line"}], in log order."""
    found = []
    lines = log.splitlines()
    matches = [_VIOLATION.search(line) for line in lines]
    received = ""  # the request each violation belongs to: the last one Prism logged as received
    requests = []
    for line in lines:
        request = _REQUEST.search(line)
        received = f"{request['method'].upper()} {request['path']}" if request else received
        requests.append(received)
    prefixed = {(i, m["message"]) for i, m in enumerate(matches) if m and m["location"] is not None}
    for index, (line, match) in enumerate(zip(lines, matches)):
        if not match:
            continue
        if match["location"] is None and any((j, match["bare"]) in prefixed for j in range(index - 8, index + 9)):
            continue  # the same violation, also logged with its location next to it
        location = match["location"] if match["location"] is not None else match["side"].lower()
        if location == where or location.startswith(where + "."):
            found.append({"severity": match["severity"], "location": location, "message": match["message"] or match["bare"], "line": line,
                          "request": requests[index]})
    return found


def prism_requests(log: str) -> list[tuple[str, str]]:
    """(METHOD, path) of every request Prism received (Prism logs the path without the query)."""
    return [(m["method"].upper(), m["path"]) for m in map(_REQUEST.search, log.splitlines()) if m]


def prism_errors(log: str) -> list[str]:
    """Requests Prism could not answer from the spec at all (no such path or method, ...)."""
    return [m["message"] for m in map(_TERMINATED.search, log.splitlines()) if m]


# ---------------------------------------------------------------------------------------------
# A generated package against Prism, through the strict client

# Prism's own error document: it could not produce an answer for that operation.
PRISM_CANNOT_ANSWER = "stoplight.io/prism/errors#NO_COMPLEX_OBJECT_TEXT"


def strict_run_against_prism(spec: Path, src: Path, module: str, env: dict[str, str], *, timeout: float = 1800) -> dict[str, Any]:
    """Serve `spec` with Prism, start the generated server (stdio) on it, list every tool with the
    TypeScript SDK client (its AJV compiles every inputSchema and outputSchema), call every tool with
    arguments made from its inputSchema, and sort the outcomes:

    - ok: the client accepted a non-error result;
    - protocol_errors: the client refused a result (-32602 mismatch, -32600 no structuredContent);
    - prism_cannot_answer: Prism has no answer for the operation (its own error document);
    - off_spec: Prism answered something outside the response model, refused with the field named;
    - email_format: the strict client's `email` format check refused a synthesized argument;
    - transport_failures: Prism's answer was not usable HTTP for httpx (e.g. `101 Switching
      Protocols` for Docker's connection-hijacking endpoints), reported as an error result;
    - other_errors: anything else (a bug, until explained);
    - request_violations: what Prism found wrong with the requests it received.
    """
    from generator.arguments import synthesize_calls

    with prism(spec.resolve()) as base, recording_proxy(base) as proxy:
        command = [sys.executable, "-m", module, "--base-url", proxy.url]
        env = {"PYTHONPATH": str(src), **env}
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True, compile_schemas=True, timeout=timeout)
        calls = synthesize_calls(listed["tool_list"])
        run = run_ts_client(command, env, calls, timeout=timeout)
        _require_alive(base, "the TypeScript client's calls")
        python = python_client_calls(command, env, calls, timeout=timeout)
        _require_alive(base, "the Python client's calls")
        base.settle()
        violations, form_arrays = split_form_array_violations(base.violations("request"), proxy.exchanges)
    results = run["results"]
    violations, overlapping = split_overlapping_one_of(violations, calls, results)

    def text(r: dict[str, Any]) -> str:
        return r.get("text") or ""

    unanswered = [r["name"] for r in results if r["isError"] and PRISM_CANNOT_ANSWER in text(r)]
    refused = [r for r in results if r["isError"] and "upstream response does not match" in text(r)]
    # Each answer the server refused, checked against the spec's own response schema: off-spec when
    # the spec refuses it too (Prism serves the spec's examples, which are often wrong); when the spec
    # accepts it, the generated model is stricter than the spec, a bug.
    verdicts = {r["name"]: judge_answer(spec, out_of(src), r, proxy.exchanges) for r in refused}
    off_spec = [name for name, verdict in verdicts.items() if verdict.startswith("off-spec")]
    stricter = [(name, verdict) for name, verdict in verdicts.items() if not verdict.startswith("off-spec")]
    email_format = [r["name"] for r in results if r["isError"] and 'must match format \\"email\\"' in text(r)]
    transport = [r["name"] for r in results if r["isError"] and text(r).startswith("upstream request failed:")]
    # Prism answers 422 to a request it finds invalid; when every violation of that request was put
    # apart above (Prism's form-array reading, a spec's unsatisfiable oneOf), so is the error.
    put_apart = {v["request"] for v in form_arrays + overlapping} - {v.get("request") for v in violations}
    invalid_for_prism = [r["name"] for r in results if r["isError"] and "UNPROCESSABLE_ENTITY" in text(r) and _request_of(r) in put_apart]
    explained = set(unanswered + [r["name"] for r in refused] + email_format + transport + invalid_for_prism)
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
        "other_errors": [(r["name"], text(r)[:300]) for r in results if r["isError"] and r["name"] not in explained],
        "raised": [(r["name"], r["error"]) for r in results if not r["ok"] and r["errorCode"] is None],
        "request_violations": violations,
        "prism_form_arrays": form_arrays,
        "spec_one_of_overlap": overlapping,
        "invalid_for_prism": invalid_for_prism,
        # The same calls through the MCP Python SDK's Client (it checks structuredContent with jsonschema):
        # refusals, and tools whose outcome (result or error) differs from the TypeScript client's.
        "python_refused": [(name, error) for name, (is_error, error) in python.items() if error is not None],
        "python_disagrees": sorted(
            r["name"] for r in results if r["ok"] and python.get(r["name"], (None, None))[0] is not r["isError"]
        ),
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


@contextlib.contextmanager
def recording_proxy(target: str) -> Iterator[RecordingProxy]:
    """A real HTTP server on 127.0.0.1 that forwards every request to `target` and records each
    answer, so that a refused answer can be judged afterwards against the spec."""
    import httpx

    from generator.demo.process import HttpServer, Reply, Seen

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
        proxy.exchanges.append(Exchange(seen.method, seen.raw_path, answer.status_code, content_type, answer.content,
                                        seen.headers.get("content-type", ""), seen.body))
        return Reply(answer.status_code, answer.content, content_type)

    with client, HttpServer() as server:
        server.default = forward
        proxy.url = server.url
        yield proxy


_FORM_ARRAY = re.compile(r"^Request body property (?P<name>\S+) must be array$")
_QUERY_ARRAY = re.compile(r"^Request query parameter (?P<name>\S+) must (?P<what>be array|be null|match a schema in anyOf|match exactly one schema in oneOf)$")


def split_form_array_violations(violations: list[dict[str, str]], exchanges: list[Exchange]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, Prism's own array limitations). An array property of a form body goes on the wire
    as repeated keys (OpenAPI's default: style form, explode true: `tag=a&tag=b`), and Prism reads one
    or more repeated keys as a string (stoplightio/prism#2473, fix proposed in #2654); an array query
    parameter inside `anyOf` is read as a string too. Such a violation is put apart only when the
    request really sent that field as `name=value` pairs; anything else stays a violation."""
    from urllib.parse import parse_qsl, urlsplit

    kept, limitation = [], []
    # Query parameters: an array inside `anyOf [array, null]` (OpenAPI 3.1's nullable, Airflow's
    # update_mask) is not deserialized by Prism at all, which then reads `update_mask=a` as a string.
    arrays_in_query = {(v.get("request"), m["name"]) for v in violations if (m := _QUERY_ARRAY.match(v["message"])) and m["what"] == "be array"}
    for violation in violations:
        method, _, path = violation.get("request", "").partition(" ")
        sent = [e for e in exchanges if e.method == method and urlsplit(e.target).path == path]
        if (match := _FORM_ARRAY.match(violation["message"])) is not None:
            forms = [e for e in sent if e.request_type.startswith("application/x-www-form-urlencoded")]
            pairs = [dict(parse_qsl(e.request_body.decode("utf-8", "replace"), keep_blank_values=True)) for e in forms]
        elif (match := _QUERY_ARRAY.match(violation["message"])) is not None and (violation.get("request"), match["name"]) in arrays_in_query:
            pairs = [dict(parse_qsl(urlsplit(e.target).query, keep_blank_values=True)) for e in sent]
        else:
            pairs = []
        (limitation if match and any(match["name"] in p for p in pairs) else kept).append(violation)
    return kept, limitation


def _strict_client_formats() -> Any:
    """jsonschema's format checks, with `email` as the strict clients (and so the server) check it:
    ajv-formats' regex, which wants a dot in the domain, where jsonschema only looks for an "@"."""
    import importlib.util

    import jsonschema

    spec = importlib.util.spec_from_file_location("_typed_mcp_runtime", Path(__file__).resolve().parent.parent / "templates" / "package" / "_runtime.py")
    runtime = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)  # type: ignore[arg-type, union-attr]
    if spec.name not in sys.modules:
        sys.modules[spec.name] = runtime  # its dataclasses look their module up there
        spec.loader.exec_module(runtime)  # type: ignore[union-attr]
    checker = jsonschema.FormatChecker(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("email")(lambda value: not isinstance(value, str) or bool(runtime._EMAIL.fullmatch(value)))
    return checker


def _request_of(result: dict[str, Any]) -> str:
    """"METHOD /path" of the upstream request behind a tool result (from its provenance)."""
    from urllib.parse import urlsplit

    source = ((result.get("meta") or {}).get("typed-mcp/source")) or {}
    return f"{source.get('method')} {urlsplit(source.get('url') or '').path}"


def split_overlapping_one_of(
    violations: list[dict[str, str]], calls: list[dict[str, Any]], results: list[dict[str, Any]]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(violations, those a spec's overlapping `oneOf` makes unavoidable). Zoom's PATCH
    /accounts/{id}/lock_settings body is `oneOf` two all-optional property lists without `type`:
    every object matches both, so no request can satisfy it. Put apart only for a request of a tool
    whose synthesized arguments noted that no value matched exactly one branch."""
    noted = {call["name"] for call in calls if any(n.startswith("oneOf") for n in call.get("notes", []))}
    requests = {_request_of(result) for result in results if result["name"] in noted}
    kept, overlapping = [], []
    for violation in violations:
        unavoidable = "must match exactly one schema in oneOf" in violation["message"] and violation.get("request") in requests
        (overlapping if unavoidable else kept).append(violation)
    return kept, overlapping


def out_of(src: Path) -> Path:
    """The generated project folder of a package's `src` folder."""
    return src.parent


def judge_answer(spec: Path, project: Path, result: dict[str, Any], exchanges: list[Exchange]) -> str:
    """Why the server refused an upstream answer: "off-spec: ..." when the spec's own response
    schema refuses the answer too, else "model stricter than the spec: ..." (or why it could not
    be judged, which counts as unexplained)."""
    from urllib.parse import urlsplit

    import jsonschema

    from generator.fidelity import spec_response_schema

    source = ((result.get("meta") or {}).get("typed-mcp/source")) or {}
    operation = json.loads((project / "typed-mcp.json").read_text())["tools"].get(result["name"], "")
    url = urlsplit(source.get("url") or "")
    sent = [e for e in exchanges if e.method == source.get("method") and urlsplit(e.target).path == url.path]
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
        last = next((line for line in reversed(lines) if _REQUEST.search(line)), "no request logged")
        error = next((line.strip() for line in reversed(lines) if "Error" in line and not line.strip().startswith("at ")), "")
        raise NodeToolsError(f"Prism exited (code {base.process.returncode}) during {during}, on {last.split('[HTTP SERVER]')[-1].strip()}: {error[:300]}")


def python_client_calls(command: list[str], env: dict[str, str], calls: list[dict[str, Any]], *, timeout: float) -> dict[str, tuple[bool | None, str | None]]:
    """Each call through the MCP Python SDK `Client` over stdio: name -> (isError, None), or
    (None, the exception) when the client raised (e.g. structuredContent not matching the outputSchema)."""
    import anyio
    from mcp import Client, StdioServerParameters

    from generator.catalog import list_all_tools

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
