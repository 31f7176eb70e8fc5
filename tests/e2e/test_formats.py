"""Issue 4's invariant for string formats: whatever a generated response model accepts, the strict
TypeScript client (the SDK's own AJV + ajv-formats validator, run with node) accepts too. Each
value below goes through both: a generated model (in-process, as the server validates upstream
JSON) and the SDK's validator on the published outputSchema."""

from __future__ import annotations

import importlib
import json

import pytest

from harness.node_tools import ajv_accepts
from support import generate, import_server

pytestmark = pytest.mark.needs("node")

# Tricky spellings per format: what pydantic's parsers take and AJV's formats refuse, and back.
CASES = {
    "date-time": [
        "2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00",
        "2024-01-01 00:00:00Z",
        "2024-01-01t00:00:00z",
        "2024-01-01T00:00:00+0000",
        "2024-01-01T00:00:00+00:00",
        "2024-01-01T24:00:00Z",
        "2024-02-30T00:00:00Z",
        "2024-01-01T00:00:60Z",
        "2024-06-30T23:59:60Z",
        "2024-01-01T00:00:00.123456789Z",
        "20240101T000000Z",
        "2024-01-01T00:00Z",
        "1700000000",
        "2024-01-01T00:00:00+25:00",
    ],
    "date": ["2024-01-01", "2024-02-29", "2023-02-29", "2024-1-1", "20240101", "2024-01-01T00:00:00Z", "2024-W01-1"],
    "time": [
        "10:00:00",
        "10:00:00Z",
        "10:00:00+01:00",
        "10:00",
        "10:00:00.5Z",
        "24:00:00Z",
        "10:00:60Z",
        "100000Z",
        "10:00:00+0100",
    ],
    "duration": ["P1D", "PT1H", "1 day", "01:00:00", "P1DT", "P1W", "PT0.5S", "P1Y2M3DT4H5M6S", "-P1D", "PT", "3600"],
    "uuid": [
        "123e4567-e89b-12d3-a456-426614174000",
        "123E4567-E89B-12D3-A456-426614174000",
        "123e4567e89b12d3a456426614174000",
        "{123e4567-e89b-12d3-a456-426614174000}",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
    ],
    "ipv4": ["127.0.0.1", "256.0.0.1", "01.2.3.4", "1.2.3", "0.0.0.0", "1.2.3.4/24"],
    "ipv6": ["::1", "2001:db8::1", "::ffff:1.2.3.4", "fe80::1%eth0", "1::2::3", "2001:DB8::1"],
    "email": ["a@b.co", "ann@localhost", "Ann.Lee+x@Example.COM", "ann@exa mple.com", "ünï@example.com"],
    "hostname": ["example.com", "a_b.com", "-a.com", "localhost", "a..b"],
    "uri": [
        "https://example.com/a",
        "/2010-04-01/Accounts.json",
        "not a uri",
        "http://x/%zz",
        "a b",
        "#frag",
        "mailto:a@b.co",
    ],
}
# Values a model must accept: refusing them would turn a good upstream answer into an error.
USUAL = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-02-29",
    "time": "10:00:00.5Z",
    "duration": "P1Y2M3DT4H5M6S",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "127.0.0.1",
    "ipv6": "2001:db8::1",
    "email": "a@b.co",
    "hostname": "example.com",
    "uri": "/2010-04-01/Accounts.json",
}


@pytest.fixture(scope="module")
def formats_package(tmp_path_factory):
    properties = {name.replace("-", "_"): {"type": "string", "format": name} for name in CASES}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "formats", "version": "1"},
        "paths": {
            "/f": {
                "get": {
                    "operationId": "get_f",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Formats"}}},
                        }
                    },
                }
            }
        },
        "components": {"schemas": {"Formats": {"type": "object", "properties": properties}}},
    }
    out = tmp_path_factory.mktemp("formats") / "formats"
    generate(spec, out, "format-checks")
    import_server(out, "format_checks")
    return importlib.import_module("format_checks.models").Formats, importlib.import_module("format_checks._runtime")


@pytest.mark.parametrize("line", [1, 2], ids=["ts1", "ts2"])
def test_a_model_accepts_no_format_value_that_strict_clients_refuse(formats_package, line):
    model, runtime = formats_package
    schema = model.model_json_schema()
    cases, accepted_by_model = [], []
    for name, values in CASES.items():
        field = name.replace("-", "_")
        for value in values:
            body = {field: value}
            cases.append((schema, body))
            try:
                runtime.validate_strict(model, json.dumps(body).encode())
                accepted_by_model.append(True)
            except runtime.ValidationError:
                accepted_by_model.append(False)
    accepted_by_client = ajv_accepts(cases, line)  # the SDK line's own validator (draft-07, 2020-12)
    looser = [
        body
        for (_, body), ours, theirs in zip(cases, accepted_by_model, accepted_by_client, strict=True)
        if ours and not theirs
    ]
    assert looser == []  # each would be a -32602 in the strict client
    for name, value in USUAL.items():
        field = name.replace("-", "_")
        runtime.validate_strict(model, json.dumps({field: value}).encode())
    # The checks are not vacuous: the client refuses some of these values, and so does the model.
    assert sum(accepted_by_client) < len(cases) and sum(accepted_by_model) < sum(accepted_by_client) + 1


def test_formats_stay_in_the_published_schema(formats_package):
    model, _ = formats_package
    properties = model.model_json_schema()["properties"]
    for name in ("date-time", "date", "time", "duration", "uuid", "ipv4", "ipv6", "email"):
        assert name in json.dumps(properties[name.replace("-", "_")]), name
    # Real APIs send relative references under `format: uri`: published (and checked) as a uri-reference.
    assert properties["uri"]["anyOf"][0] == {"type": "string", "format": "uri-reference"}


def test_the_ported_rules_are_ajv_formats_own():
    """The runtime's uri-reference regex is ajv-formats' source, character for character."""
    import re

    from harness.node_tools import NODE_DIR
    from typed_mcp.resources import runtime_dir

    source = (NODE_DIR / "node_modules" / "ajv-formats" / "dist" / "formats.js").read_text()
    runtime = (runtime_dir() / "formats.py").read_text()
    for name in ("uri-reference", "duration", "uuid", "ipv4", "ipv6"):
        pattern = re.search(rf'^\s*"?{re.escape(name)}"?: /\^(.*)\$/i?,$', source, re.MULTILINE).group(1)
        assert pattern in runtime, name
