"""Fuzzing a generated server: Hypothesis draws arguments for every tool (valid ones from the
inputSchema, boundary values around its bounds, and hostile ones: huge strings, deep nesting, wrong
types, control characters, path tricks, unicode), the real server gets them over stdio or streamable
HTTP from the MCP Python SDK client, and a recording upstream on 127.0.0.1 (`harness.hostile`) sees
whatever requests leave. Each call is judged:

- nothing crashes (no protocol error, no dead server, no "unexpected" last-line-of-defence error);
- arguments the inputSchema refuses (jsonschema, Draft 2020-12) send no request, and their
  refusal is an isError naming the field;
- no request's host or path escapes the base URL: the Host is the upstream's, the path keeps the
  base URL's prefix, and no segment is a dot segment after percent-decoding (as often as it decodes).

`python -m harness.fuzz --calls 10000` (from tests/, `make fuzz`) runs the demo package and three
corpus specs, each over both transports, and prints calls, refusals, requests and failures per spec.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import jsonschema
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from mcp import Client, StdioServerParameters

from harness.arguments import _resolve, synthesize_arguments
from harness.demo.process import free_port, running
from harness.hostile import OVERSIZED, Hostile, Request
from support import CORPUS, REPO

DEMO = REPO / "generated" / "weather-mcp"
# Three varied corpus specs: forum forms and bodies (Discourse), many string path parameters
# (Wikimedia), deep JSON bodies and Azure's path and api-version parameters.
CORPUS_SPECS = (
    "apisguru__discourse.local.json",
    "apisguru__wikimedia.org.json",
    "apisguru__azure.com_network-virtualWan.json",
)
BASE_PATH = "/fuzz-base"  # the base URL's path prefix, which every request must keep
CALL_TIMEOUT = 60.0
MAX_MESSAGE = 20_000
UNREADABLE = "the server cannot read this message"  # the server's JSON-RPC error for a line the SDK cannot parse  # an error text longer than this is unbounded

PATH_TRICKS = [
    ".", "..", "%2e", "%2e%2e", "%2E%2e", ".%2e", "%252e%252e", "..;", ";", ";x=1", "..;/admin",
    "a/../b", "../../../../etc/passwd", "..%2f..%2fadmin", "%2f", "/", "//evil.example", "\\..\\..",
    "http://evil.example/x", "@evil.example", "?q=1", "#frag", "%00", "\x00", "a\r\nHost: evil.example",
    "\r\n\r\nGET /admin HTTP/1.1", "\u2025", "\uff0e\uff0e", "\u202egnp.exe", "%", "%zz", " ", "\t",
    "😀", "Ω≈ç√", "\u0000..", "..\u0000",
]  # fmt: skip


def _nest(depth: int, kind: str) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def hostile_values() -> st.SearchStrategy[Any]:
    """Values no careful client would send."""
    return st.one_of(
        st.sampled_from(PATH_TRICKS),
        st.builds(lambda n, c: c * n, st.integers(10_000, 300_000), st.sampled_from(["A", "é", ".", "/", "%"])),
        # Past the SDK's JSON parser's limit over stdio (about 200 levels with the JSON-RPC envelope),
        # short of the SDK client's own serialization limit (about 290).
        st.builds(_nest, st.integers(10, 280), st.sampled_from(["list", "dict"])),
        st.text(st.characters(max_codepoint=0x1F), min_size=1, max_size=20),
        st.text(min_size=1, max_size=40),
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.sampled_from([0, -1, 2**31, 2**53 + 1, 2**63, -(2**63) - 1, 1.5, -0.0, 1e308, -1e308, 5e-324]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(st.integers(), max_size=5),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
        st.sampled_from(["1", "true", "null", "[]", "{}", "1e999"]),
    )


def boundary_values(schema: dict[str, Any]) -> list[Any]:
    """Values at and just past the schema's bounds and enums."""
    out: list[Any] = []
    for key, delta in (("minimum", -1), ("maximum", 1), ("exclusiveMinimum", 0), ("exclusiveMaximum", 0)):
        if isinstance(schema.get(key), (int, float)) and not isinstance(schema.get(key), bool):
            out += [schema[key], schema[key] + delta, schema[key] + delta / 2]
    for key, delta in (("minLength", -1), ("maxLength", 1)):
        if isinstance(schema.get(key), int) and schema[key] < 100_000:
            out += ["a" * schema[key], "a" * max(schema[key] + delta, 0)]
    for key, delta in (("minItems", -1), ("maxItems", 1)):
        if isinstance(schema.get(key), int) and schema[key] < 10_000:
            out += [["a"] * max(schema[key] + delta, 0)]
    for value in schema.get("enum") or []:
        out += [value, f"{value}x", str(value).upper()]
    return out


SAMPLES = [None, True, False, 0, -1, 1.5, "", "x", "7", "true", [], ["x"], {}, {"a": 1}]


def wrong_types(schema: dict[str, Any]) -> list[Any]:
    """Sample values of the JSON types `schema` refuses."""
    try:
        validator = jsonschema.Draft202012Validator(schema)
        return [value for value in SAMPLES if not validator.is_valid(value)]
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot apply: no sample
        return []


@st.composite
def mutated(draw: Any, schema: dict[str, Any], valid: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """Valid arguments with one thing broken: an argument (or a property inside one) replaced by a
    hostile or boundary value, a required argument dropped, or an unknown one added."""
    args = dict(draw(valid))
    properties = schema.get("properties") or {}
    names = sorted(set(properties) | set(args))
    action = draw(
        st.sampled_from(["replace", "replace", "wrong type", "wrong type", "boundary", "nested", "drop", "extra"])
    )
    if not names or action == "extra":
        args[draw(st.sampled_from(["unknown", "__proto__", "body", ""]))] = draw(hostile_values())
        return args
    name = draw(st.sampled_from(names))
    if action == "drop":
        args.pop(name, None)
    elif action == "boundary":
        candidates = boundary_values(_resolve(properties.get(name, {}), schema))
        args[name] = draw(st.sampled_from(candidates)) if candidates else draw(hostile_values())
    elif action == "wrong type":
        wrong = wrong_types({**_resolve(properties.get(name, {}), schema), "$defs": schema.get("$defs", {})})
        args[name] = draw(st.sampled_from(wrong)) if wrong else draw(hostile_values())
    elif action == "nested" and isinstance(args.get(name), dict) and args[name]:
        inner = dict(args[name])
        inner[draw(st.sampled_from(sorted(inner)))] = draw(hostile_values())
        args[name] = inner
    else:
        args[name] = draw(hostile_values())
    return args


def valid_arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments (hypothesis-jsonschema; the harness's synthesized ones where it cannot draw
    from this schema)."""
    try:
        valid = from_schema(schema, allow_x00=False)
        _draw(valid, 1, 0)  # hypothesis-jsonschema refuses some schemas only when first drawn
    except Exception:  # noqa: BLE001 - any refusal: fall back to the synthesized arguments
        try:
            valid = st.just(synthesize_arguments(schema))
        except ValueError:
            valid = st.just({})
    return valid


def _draw(strategy: st.SearchStrategy[Any], count: int, seed_value: int) -> list[Any]:
    """`count` values of `strategy`, the same ones on every run (no shrinking, no database)."""
    found: list[Any] = []

    @seed(seed_value)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        found.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect()
    return found


def draw_arguments(schema: dict[str, Any], count: int, seed: int) -> list[dict[str, Any]]:
    """`count` distinct argument sets (fewer when the tool's space is that small): a third valid,
    two thirds mutated, interleaved."""
    valid = valid_arguments(schema)
    share = max(1, count // 3)
    drawn = [_draw(valid, share * 2, seed), _draw(mutated(schema, valid), (count - share) * 2, seed)]
    unique: dict[str, dict[str, Any]] = {}
    for index in range(max(map(len, drawn))):
        for kind in drawn:
            if index < len(kind):
                unique.setdefault(json.dumps(kind[index], sort_keys=True), kind[index])
    return list(unique.values())[:count]


# -- judging -----------------------------------------------------------------------------------------


def refused_names(schema: dict[str, Any], args: dict[str, Any]) -> set[str] | None:
    """The top-level argument names the inputSchema refuses in `args`; None when it accepts them.
    (Formats are annotations in Draft 2020-12, and hints here: the upstream judges them.)"""
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(args))
    if not errors:
        return None
    names: set[str] = set()
    for error in errors:
        if error.absolute_path:
            names.add(str(error.absolute_path[0]))
        elif error.validator == "required":
            names.update(set(schema.get("required", [])) - set(args))
        elif error.validator == "additionalProperties":
            names.update(set(args) - set(schema.get("properties") or {}))
    return names


def escape(request: Request, host: str) -> str | None:
    """Why `request` left the base URL, or None."""
    if request.target == OVERSIZED:
        return None
    if request.headers.get("host") != host:
        return f"Host {request.headers.get('host')!r}"
    path = request.target.split("?", 1)[0]
    if not path.startswith(BASE_PATH + "/"):
        return f"path {path[:120]!r} outside {BASE_PATH}/"
    decoded = path
    for _ in range(8):
        decoded, previous = unquote(decoded), decoded
        if decoded == previous:
            break
    if not decoded.startswith(BASE_PATH + "/"):
        return f"decoded path {decoded[:120]!r} outside {BASE_PATH}/"
    dots = [segment for segment in decoded.replace("\\", "/").split("/") if segment in (".", "..")]
    return f"dot segment in decoded path {decoded[:120]!r}" if dots else None


@dataclass
class Tally:
    """One spec over one transport."""

    spec: str
    transport: str
    calls: int = 0
    invalid: int = 0  # calls whose arguments the inputSchema refuses
    refusals: int = 0  # isError without a request, or the protocol error for an unreadable message
    unsendable: int = 0  # arguments the SDK client itself cannot serialize (not counted as calls)
    requests: int = 0  # calls that sent at least one request
    valid_refused: Counter = field(default_factory=Counter)  # schema-valid, refused anyway: reason -> count
    samples: dict[str, str] = field(default_factory=dict)  # reason -> one such call and its error
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def judge(
    tally: Tally, tool: str, schema: dict, args: dict, text: str, is_error: bool, sent: list[Request], host: str
) -> None:
    refused = refused_names(schema, args)
    shown = json.dumps(args, ensure_ascii=True)[:300]
    fail = tally.failures.append
    tally.calls += 1
    tally.invalid += refused is not None
    if sent:
        tally.requests += 1
    elif is_error:
        tally.refusals += 1
    if "unexpected" in text and is_error:
        fail(f"{tool}: crash caught by the runtime ({text[:200]!r}) for {shown}")
    if len(text) > MAX_MESSAGE:
        fail(f"{tool}: unbounded message ({len(text)} characters) for {shown}")
    for request in sent:
        why = escape(request, host)
        if why:
            fail(f"{tool}: request escapes the base URL: {why} for {shown}")
    if refused is not None and sent:
        fail(f"{tool}: a request left for arguments the inputSchema refuses ({sorted(refused)}) {shown}")
    elif refused is not None and not is_error:
        fail(f"{tool}: arguments the inputSchema refuses ({sorted(refused)}) were accepted: {shown}")
    elif refused is not None and refused and not any(name in text for name in refused if name):
        fail(f"{tool}: refusal does not name the field ({sorted(refused)}): {text[:200]!r} for {shown}")
    elif refused is None and not sent and is_error:
        tally.valid_refused[_reason(text)] += 1
        tally.samples.setdefault(_reason(text), f"{shown[:150]} -> {text[:200]!r}")


def _reason(text: str) -> str:
    """An error text without its values: what kind of refusal it is."""
    first = text.splitlines()[0] if text else ""
    for marker in ("'", '"', ": "):
        first = first.split(marker)[0]
    return first[:80]


# -- running -------------------------------------------------------------------------------------------


@dataclass
class Package:
    name: str
    path: Path
    module: str
    env: dict[str, str]  # the package's settings: short timeout, no retries, every credential set


def package(name: str, path: Path) -> Package:
    module = json.loads((path / "typed-mcp.json").read_text())["module"]
    probe = (
        f"import json, {module}.upstream as u; a = u.api;"
        "print(json.dumps([a.env_prefix, [v for s in a.schemes.values() for v in s.env]]))"
    )
    env = {**os.environ, "PYTHONPATH": str(path / "src")}
    prefix, credentials = json.loads(subprocess.check_output([sys.executable, "-c", probe], env=env, text=True))
    settings_env = {f"{prefix}_TIMEOUT": "5", f"{prefix}_RETRIES": "0", **dict.fromkeys(credentials, "fuzz-credential")}
    return Package(name, path, module, {"PYTHONPATH": str(path / "src"), **settings_env})


@contextlib.asynccontextmanager
async def session(pkg: Package, transport: str, base_url: str) -> AsyncIterator[Client]:
    args = [sys.executable, "-m", pkg.module, "--base-url", base_url]
    if transport == "stdio":
        params = StdioServerParameters(command=args[0], args=args[1:], env={**os.environ, **pkg.env})
        async with Client(params, read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client
        return
    port = free_port()
    http = [*args, "--transport", "streamable-http", "--port", str(port)]
    with running(http, f"http://127.0.0.1:{port}/health", pkg.env):
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client


async def fuzz(pkg: Package, transport: str, calls: int, upstream: Hostile) -> Tally:
    """About `calls` calls spread evenly over the package's tools."""
    tally = Tally(pkg.name, transport)
    started = time.monotonic()
    host = upstream.url.removeprefix("http://")
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(session(pkg, transport, upstream.url + BASE_PATH))
        tools = (await client.list_tools()).tools
        per_tool = max(1, math.ceil(calls / len(tools)))
        for index, tool in enumerate(tools):
            seed = index * 2 + (transport == "http")
            for args in draw_arguments(tool.input_schema, per_tool, seed):
                if tally.calls >= calls:
                    break
                before = len(upstream.seen)
                try:
                    result = await client.call_tool(tool.name, args)
                except ValueError as exc:
                    if "serialization depth" not in str(exc):
                        raise
                    tally.unsendable += 1  # the client refused to send it: nothing reached the server
                    continue
                except Exception as exc:  # noqa: BLE001 - a protocol error or a dead server: a failure
                    tally.calls += 1
                    shown = json.dumps(args)[:300]
                    if str(exc).startswith(UNREADABLE) and len(upstream.seen) == before:
                        tally.refusals += 1  # a message nested too deep for the SDK's parser, answered as such
                        tally.invalid += refused_names(tool.input_schema, args) is not None
                        continue
                    tally.failures.append(f"{tool.name}: {type(exc).__name__}: {str(exc)[:200]} for {shown}")
                    if not await _alive(client):
                        await stack.aclose()
                        client = await stack.enter_async_context(session(pkg, transport, upstream.url + BASE_PATH))
                    continue
                text = "\n".join(getattr(c, "text", "") for c in result.content)
                sent = upstream.seen[before:]
                judge(tally, tool.name, tool.input_schema, args, text, result.is_error, sent, host)
    tally.seconds = time.monotonic() - started
    return tally


async def _alive(client: Client) -> bool:
    try:
        with anyio.fail_after(10):
            await client.list_tools()
        return True
    except Exception:  # noqa: BLE001 - any failure to answer a ping
        return False


def generate_corpus(spec: str, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "typed_mcp", "generate", str(CORPUS / spec), "--out", str(out), "-q", "--no-snapshot"],
        check=True,
        env={**os.environ, "TYPED_MCP_NO_CACHE": "1"},
    )
    return out


def table(tallies: list[Tally]) -> str:
    rows = [
        "| spec | transport | calls | schema-invalid | refusals | requests | valid but refused | failures | seconds |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in tallies:
        refused = sum(t.valid_refused.values())
        rows.append(
            f"| {t.spec} | {t.transport} | {t.calls} | {t.invalid} | {t.refusals} | {t.requests} | {refused} |"
            f" {len(t.failures)} | {t.seconds:.1f} |"
        )
    total = [sum(getattr(t, k) for t in tallies) for k in ("calls", "invalid", "refusals", "requests")]
    failures = sum(len(t.failures) for t in tallies)
    refused = sum(sum(t.valid_refused.values()) for t in tallies)
    rows.append(f"| total | | {' | '.join(map(str, total))} | {refused} | {failures} | |")
    return "\n".join(rows)


async def run(specs: list[str], calls: int, transports: list[str]) -> list[Tally]:
    share = max(1, calls // (len(specs) * len(transports)))
    tallies = []
    with tempfile.TemporaryDirectory(prefix="typed-mcp-fuzz-") as tmp, Hostile(scripted=False) as upstream:
        for spec in specs:
            path = DEMO if spec == "demo" else generate_corpus(spec, Path(tmp) / spec.removesuffix(".json"))
            pkg = package(spec.removesuffix(".json").removeprefix("apisguru__"), path)
            for transport in transports:
                tally = await fuzz(pkg, transport, share, upstream)
                tallies.append(tally)
                print(f"{tally.spec} {transport}: {tally.calls} calls, {len(tally.failures)} failures", file=sys.stderr)
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000, help="calls in total, shared by specs and transports")
    parser.add_argument("--spec", action="append", help="'demo' or a corpus file name (default: demo and three)")
    parser.add_argument("--transport", action="append", choices=["stdio", "http"], help="default: both")
    parser.add_argument("--show", type=int, default=20, help="failures and refusal reasons shown per spec")
    options = parser.parse_args(argv)
    tallies = asyncio.run(
        run(options.spec or ["demo", *CORPUS_SPECS], options.calls, options.transport or ["stdio", "http"])
    )
    for tally in tallies:
        for line in tally.failures[: options.show]:
            print(f"FAIL {tally.spec} {tally.transport}: {line}")
        for reason, count in tally.valid_refused.most_common(options.show):
            print(f"note {tally.spec} {tally.transport}: valid but refused x{count}: {tally.samples[reason]}")
    print(table(tallies))
    return 1 if any(t.failures for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
