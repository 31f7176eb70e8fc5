"""Fuzzing, the CI share (`make fuzz` runs 10,000 calls): Hypothesis-drawn valid, boundary and
hostile arguments through the real demo server over stdio and streamable HTTP and through a corpus
spec's server, against a recording upstream (`harness.fuzz` says what each call is judged on).
The judge's own checks are tested first, so that a fuzz run without failures means something."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from harness import fuzz
from harness.hostile import Hostile, Request
from support import CORPUS, WEATHER_REPORT, generate

pytestmark = pytest.mark.anyio
HOST = "127.0.0.1:8000"
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}


def _request(target: str, host: str = HOST) -> Request:
    return Request("main", "GET", target, {"host": host}, b"")


@pytest.mark.parametrize(
    ("target", "host", "why"),
    [
        ("/fuzz-base/v1/weather/London", HOST, None),
        ("/fuzz-base/v1/weather/a%2Fb?x=..", HOST, None),
        ("/fuzz-base/v1/weather/London", "evil.example", "Host"),
        ("/v1/weather/London", HOST, "outside /fuzz-base/"),
        ("/fuzz-base/v1/../admin", HOST, "dot segment"),
        ("/fuzz-base/v1/weather/%2e%2e/admin", HOST, "dot segment"),
        ("/fuzz-base/v1/weather/%252E%252e", HOST, "dot segment"),
        ("/fuzz-base/v1/weather/a%2F..%2F..%2Fadmin", HOST, "dot segment"),
        ("/fuzz-base%2F..%2Fadmin/x", HOST, "outside /fuzz-base/"),
    ],
)
def test_escape_check_flags_what_leaves_the_base_url(target, host, why):
    found = fuzz.escape(_request(target, host), HOST)
    assert (found is None) if why is None else (why in found), found


def test_judge_flags_each_kind_of_failure():
    def failures(args, text, is_error, sent):
        tally = fuzz.Tally("t", "stdio")
        fuzz.judge(tally, "tool", SCHEMA, args, text, is_error, sent, HOST)
        return tally

    ok = _request("/fuzz-base/v1/weather/x")
    assert not failures({"city": "x"}, "{}", False, [ok]).failures
    assert not failures(
        {"city": 1}, "validation error for Arguments\ncity\n  Input should be a string", True, []
    ).failures
    assert "a request left" in failures({"city": 1}, "", True, [ok]).failures[0]
    assert "does not name the field" in failures({"city": 1}, "validation error", True, []).failures[0]
    assert "does not name the field" in failures({}, "validation error: days", True, []).failures[0]
    assert "were accepted" in failures({"days": "x", "city": "x"}, "{}", False, []).failures[0]
    assert "crash caught" in failures({"city": "x"}, "GET failed: unexpected KeyError", True, [ok]).failures[0]
    assert "escapes" in failures({"city": "x"}, "{}", False, [_request("/admin")]).failures[0]
    valid_refused = failures({"city": "."}, "path parameter 'city' may not be '.'", True, [])
    assert not valid_refused.failures and sum(valid_refused.valid_refused.values()) == 1


def test_drawn_arguments_are_deterministic_and_mix_valid_and_refused():
    first, again = (fuzz.draw_arguments(SCHEMA, 60, seed=3) for _ in range(2))
    assert first == again
    invalid = sum(fuzz.refused_names(SCHEMA, args) is not None for args in first)
    assert 5 <= invalid <= 50, invalid  # mutations are often still valid (an extra argument, a string for a string)


def assert_sound(tallies: list[fuzz.Tally]) -> None:
    print("\n" + fuzz.table(tallies))
    for tally in tallies:
        assert not tally.failures, "\n".join(tally.failures[:10])
        assert tally.invalid >= tally.calls // 10 and tally.requests >= tally.calls // 3, tally  # not vacuous


async def test_fuzz_the_demo_over_both_transports():
    """About 100 calls (`make fuzz` makes 10,000): no crash, no request for refused arguments, every
    refusal names its field, no request outside the base URL."""
    demo = fuzz.package("demo", fuzz.DEMO)
    with Hostile(scripted=False) as upstream:
        assert_sound([await fuzz.fuzz(demo, "stdio", 60, upstream), await fuzz.fuzz(demo, "http", 40, upstream)])


@pytest.mark.long  # generating it takes half a minute on 2 cores (make fuzz runs more corpus specs, longer)
async def test_fuzz_a_corpus_spec(tmp_path):
    spec = "apisguru__wikimedia.org.json"
    if not (CORPUS / spec).is_file():
        pytest.skip(f"corpus spec {spec} not found in {CORPUS}")
    wikimedia = fuzz.package("wikimedia", fuzz.generate_corpus(spec, tmp_path / "wikimedia"))
    with Hostile(scripted=False) as upstream:
        assert_sound([await fuzz.fuzz(wikimedia, "stdio", 110, upstream)])


# -- what the fuzzer found, one test each (each failed before its fix) -------------------------------------


def _demo(upstream: Hostile) -> StdioServerParameters:
    demo = fuzz.package("demo", fuzz.DEMO)
    args = ["-m", demo.module, "--base-url", upstream.url + fuzz.BASE_PATH]
    return StdioServerParameters(command=sys.executable, args=args, env={**os.environ, **demo.env})


REFUSED = [  # one server for all cases: each starts and checks the recorder afresh
    ("get_report", {"report_id": False}, "report_id"),  # the SDK's lax model read false as 0
    ("get_report", {"report_id": "7"}, "report_id"),  # ... and "7" as 7
    ("get_forecast", {"city": "Oslo", "days": True}, "days"),
    ("create_report", {"body": json.dumps(WEATHER_REPORT)}, "body"),  # ... and a JSON string as the object
]


async def test_arguments_the_input_schema_refuses_send_no_request():
    with Hostile(scripted=False) as upstream:
        async with Client(_demo(upstream)) as client:
            for tool, arguments, field in REFUSED:
                upstream.seen.clear()
                result = await client.call_tool(tool, arguments)
                assert upstream.seen == [], (tool, arguments, upstream.seen)
                assert result.is_error and f"{field}: " in result.content[0].text, result.content[0].text
                await client.call_tool("get_report", {"report_id": 7})  # valid: it goes out
                assert len(upstream.seen) == 1


async def test_a_message_too_deep_for_the_sdk_parser_is_answered_over_stdio():
    """The SDK's stdio transport dropped a line its JSON parser cannot read (nesting past about 200):
    the client waited for its own timeout. Now the line is answered with -32700 at once."""
    with Hostile(scripted=False) as upstream:
        async with Client(_demo(upstream), read_timeout_seconds=20) as client:
            started = time.monotonic()
            with pytest.raises(MCPError, match="the server cannot read this message: Invalid JSON: recursion limit"):
                await client.call_tool("get_weather", {"city": "x", "deep": fuzz._nest(250, "dict")})
            assert time.monotonic() - started < 15 and upstream.seen == []  # not the client's 20 s wait
            assert not (await client.call_tool("get_weather", {"city": "ok"})).is_error


HEADER_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "h", "version": "1"},
    "paths": {
        "/items/{id}": {
            "get": {
                "operationId": "get_item",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "X-Token", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}},
            }
        }
    },
}


async def test_unsendable_valid_values_are_clear_refusals_naming_the_parameter(tmp_path):
    """A path too long for httpx was an "unexpected InvalidURL"; a non-ASCII header value an
    "invalid request (UnicodeEncodeError)". Both are now refusals that say why, and send nothing."""
    out = tmp_path / "h"
    generate(HEADER_SPEC, out, "hdr")
    pkg = fuzz.package("hdr", out)
    with Hostile(scripted=False) as upstream:
        async with fuzz.session(pkg, "stdio", upstream.url + fuzz.BASE_PATH) as client:
            long = await client.call_tool("get_item", {"id": "." * 70_000})
            assert long.is_error and "invalid request URL: URL component 'path' too long" in long.content[0].text
            accented = await client.call_tool("get_item", {"id": "1", "x_token": "clé"})
            assert accented.is_error and "header parameter 'X-Token' must be ASCII" in accented.content[0].text
            assert upstream.seen == []
            assert not (await client.call_tool("get_item", {"id": "1", "x_token": "key"})).is_error


DOT_VALUES = ["\\..\\..", "..%2f..%2fadmin", "a/../b", "x\\..", "%5c..%5C..", "%252e%252e%252f"]


async def test_path_values_that_decode_to_dot_segments_are_refused():
    """`\\..\\..` went out as `%5C..%5C..` and `..%2f..%2fadmin` as `..%252f..%252fadmin`: one segment on
    the wire, but `..` segments to a server that decodes before it normalizes (IIS reads `\\` as `/`)."""
    with Hostile(scripted=False) as upstream:
        async with Client(_demo(upstream)) as client:
            for value in DOT_VALUES:
                result = await client.call_tool("get_weather", {"city": value})
                assert upstream.seen == [] and result.is_error, value
                assert "path parameter 'city' may not hold a '.' or '..' segment" in result.content[0].text
            assert not (await client.call_tool("get_weather", {"city": "a..b"})).is_error
