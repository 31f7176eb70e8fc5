"""The `typed-mcp generate` contract: exit codes, one-line reasons, untouched output on failure,
fetching live specs (headers, retries, caps, HTML), snapshots, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import DEMO_CONFIG, REPO, HttpServer, Reply, generate, generated_copy, run_cli, tree_digest

WEATHER = REPO / "specs" / "weather-api.json"
COMMITTED_PACKAGE = REPO / "generated" / "weather-mcp"


def minimal(**paths) -> dict:
    return {"openapi": "3.1.0", "info": {"title": "Mini", "version": "1"}, "paths": paths}


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    """An output folder holding a good package, to check failures leave it alone."""
    return generated_copy(WEATHER, tmp_path / "pkg", "weather-mcp")


def test_generate_from_file_writes_a_complete_project(tmp_path: Path):
    out = tmp_path / "w"
    proc = generate(WEATHER, out, "weather-mcp")
    for relative in (
        "pyproject.toml",
        "README.md",
        "Dockerfile",
        "typed-mcp.json",
        "src/weather_mcp/__main__.py",
        "src/weather_mcp/models/weather_data.py",
        "src/weather_mcp/tools/get_weather.py",
    ):
        assert (out / relative).is_file(), relative
    assert "13 tools (12 with outputSchema), 0 skipped" in proc.stderr
    manifest = json.loads((out / "typed-mcp.json").read_text())
    assert manifest["tools"]["get_weather"] == "GET /v1/weather/{city}"
    assert manifest["spec"]["sha256"] == __import__("hashlib").sha256(WEATHER.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("bad.json", '{"openapi": "3.1.0", "info": ', "invalid JSON at line 1"),
        ("bad.json", "[1, 2]", "the document is a list, not an OpenAPI object"),
        ("bad.json", "null", "the document is null, not an OpenAPI object"),
        ("bad.json", '"openapi"', "the document is a string, not an OpenAPI object"),
        ("bad.json", '{"info": {}}', "missing the 'openapi' version field"),
        ("bad.json", '{"openapi": "4.0.0", "info": {}, "paths": {}}', "OpenAPI 4.0.0 is not supported"),
        ("bad.json", "<!DOCTYPE html><html><body>login</body></html>", "got an HTML page"),
        # Issue 31 item 7: a YAML document that is no object said "the document is a NoneType".
        ("bad.yaml", "", "the document is empty"),
        ("bad.yaml", "# nothing yet\n\n", "the document is empty"),
        ("bad.yaml", "null\n", "the document is null, not an OpenAPI object"),
        ("bad.yaml", "~\n", "the document is null, not an OpenAPI object"),
        ("bad.yaml", "- openapi\n- 3.1.0\n", "the document is a list, not an OpenAPI object"),
        ("bad.yaml", "openapi 3.1.0\n", "the document is a string, not an OpenAPI object"),
        ("bad.yaml", "3.1\n", "the document is a number, not an OpenAPI object"),
        ("bad.yaml", "yes\n", "the document is a boolean, not an OpenAPI object"),
    ],
)
def test_bad_input_fails_cleanly_and_leaves_output_alone(
    existing: Path, tmp_path: Path, name: str, content: str, expected: str
):
    before = tree_digest(existing)
    bad = tmp_path / name
    bad.write_text(content)
    proc = run_cli("generate", str(bad), "--out", str(existing), "--package-name", "weather-mcp")
    assert proc.returncode != 0
    line = one_line_error(proc)
    assert str(bad) in line and expected in line, line
    assert tree_digest(existing) == before
    assert sorted(p.name for p in existing.parent.iterdir() if p.name.startswith(".pkg")) == []  # no temp leftovers


def test_a_dangling_ref_degrades_its_schema_and_strict_refuses_it(tmp_path: Path):
    """The unit of failure is the operation: a `$ref` that points at nothing is dropped (that schema
    is open) with a note; `--strict` makes it a one-line failure that writes nothing."""
    schema = {"$ref": "#/components/schemas/Nope"}
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}
    spec = tmp_path / "dangling.json"
    spec.write_text(json.dumps(minimal(**{"/a": {"get": {"operationId": "get_a", "responses": ok}}})))
    out = tmp_path / "out"
    generate(spec, out, "dangling")
    notes = json.loads((out / "typed-mcp.json").read_text())["notes"]
    assert any("'#/components/schemas/Nope' points at nothing: dropped" in note for note in notes), notes
    strict = tmp_path / "strict"
    proc = run_cli("generate", str(spec), "--out", str(strict), "--strict", "--no-snapshot")
    assert proc.returncode == 5 and "Nope' points at nothing" in one_line_error(proc)
    assert not strict.exists()


def test_yaml_input(tmp_path: Path):
    spec = tmp_path / "mini.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: Mini, version: '2024-01-01'}\npaths:\n  /ping:\n    get:\n      operationId: ping\n"
        "      responses:\n        200:\n          description: ok\n          content:\n            application/json:\n"
        "              schema: {type: object, properties: {at: {type: string, example: 2024-01-01}}}\n"
    )
    out = tmp_path / "mini"
    generate(spec, out, "mini")
    assert "ping" in json.loads((out / "typed-mcp.json").read_text())["tools"]
    assert 'VERSION = "2024.1.1"' in (out / "src/mini/_about.py").read_text().replace("'", '"')


def test_webhooks_only_document_has_its_own_exit_code(tmp_path: Path):
    spec = REPO.parent / "shared" / "corpus" / "oai__v3.1-webhook-example.json"
    if not spec.exists():  # the corpus sits beside the repository; build the same shape otherwise
        spec = tmp_path / "hooks.json"
        spec.write_text(
            json.dumps(
                {"openapi": "3.1.0", "info": {"title": "h", "version": "1"}, "webhooks": {"newPet": {"post": {}}}}
            )
        )
    proc = run_cli("generate", str(spec), "--out", str(tmp_path / "o"))
    assert proc.returncode == 4
    assert "no operations" in one_line_error(proc) and "1 webhooks" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path):
    victim = tmp_path / "important"
    victim.mkdir()
    (victim / "notes.txt").write_text("keep me")
    proc = run_cli("generate", str(WEATHER), "--out", str(victim))
    assert proc.returncode == 6
    assert "refusing to replace" in one_line_error(proc)
    assert (victim / "notes.txt").read_text() == "keep me"


def test_regeneration_replaces_the_previous_output(existing: Path):
    (existing / "stale.txt").write_text("from an older run")
    generate(WEATHER, existing, "weather-mcp")
    assert not (existing / "stale.txt").exists()


def test_same_spec_gives_byte_identical_output(tmp_path: Path):
    outputs = []
    for seed, folder in (("1", "a/one"), ("4242", "b/two")):
        out = tmp_path / folder
        out.parent.mkdir(parents=True)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "typed_mcp",
                "generate",
                str(WEATHER),
                "--out",
                str(out),
                "--package-name",
                "weather-mcp",
            ],
            capture_output=True,
            text=True,
            cwd=out.parent,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(tree_digest(out))
    assert outputs[0] == outputs[1]


def test_committed_package_matches_the_committed_snapshot(tmp_path: Path):
    """`make generate` is a no-op on a clean checkout: generated/ is what specs/ produces."""
    out = tmp_path / "weather-mcp"
    generate(WEATHER, out, "weather-mcp", "--config", str(DEMO_CONFIG))
    assert tree_digest(out) == tree_digest(REPO / "generated" / "weather-mcp")


class TestLiveSpec:
    def test_fetch_with_header_saves_the_snapshot(self, tmp_path: Path):
        raw = WEATHER.read_bytes()
        secret = "s3cret-token-value"
        with HttpServer() as server:
            server.routes["/v1/openapi.json"] = lambda seen: (
                Reply(200, raw) if seen.headers.get("x-api-key") == secret else Reply(401, b'{"detail":"no"}')
            )
            url = f"{server.url}/v1/openapi.json"
            out, snapshot = tmp_path / "live", tmp_path / "specs" / "weather.json"
            denied = run_cli("generate", url, "--out", str(out), "--snapshot", str(snapshot))
            assert denied.returncode == 3 and "HTTP 401" in one_line_error(denied)
            assert not out.exists() and not snapshot.exists()
            ok = run_cli("generate", url, "--out", str(out), "--snapshot", str(snapshot), "-H", f"X-Api-Key: {secret}")
            assert ok.returncode == 0, ok.stderr
        assert snapshot.read_bytes() == raw
        assert secret not in ok.stderr + ok.stdout + denied.stderr
        assert secret not in "".join(p.read_text() for p in out.rglob("*") if p.is_file())

    def test_the_default_snapshot_is_named_after_the_package(self, tmp_path: Path):
        """Without --snapshot (or --package-name), a fetched spec is saved as specs/<package>.json, the
        package's name derived from the title: a second API never overwrites the first one's snapshot."""
        raw = WEATHER.read_bytes()
        with HttpServer() as server:
            server.routes["/v1/openapi.json"] = lambda seen: Reply(200, raw)
            ok = run_cli("generate", f"{server.url}/v1/openapi.json", "--out", "out", cwd=tmp_path)
        assert ok.returncode == 0, ok.stderr
        package = json.loads((tmp_path / "out" / "typed-mcp.json").read_text())["package"]
        assert package == "weather-mcp"  # from the title, Weather API
        assert sorted(p.name for p in (tmp_path / "specs").iterdir()) == [f"{package}.json"]
        assert (tmp_path / "specs" / f"{package}.json").read_bytes() == raw
        assert json.loads((tmp_path / "out" / "typed-mcp.json").read_text())["spec"]["file"] == f"{package}.json"
        assert f"snapshot of the spec -> specs/{package}.json" in ok.stderr

    def test_retries_server_errors(self, tmp_path: Path):
        raw = WEATHER.read_bytes()
        attempts = []

        def flaky(seen):
            attempts.append(seen)
            return Reply(503, b"busy") if len(attempts) < 3 else Reply(200, raw)

        with HttpServer() as server:
            server.routes["/spec.json"] = flaky
            proc = run_cli("generate", f"{server.url}/spec.json", "--out", str(tmp_path / "o"), "--no-snapshot")
        assert proc.returncode == 0, proc.stderr
        assert len(attempts) == 3

    @pytest.mark.parametrize(
        ("reply", "expected", "code"),
        [
            (Reply(200, "<html><body>Sign in</body></html>", "text/html"), "got an HTML page", 1),
            (Reply(404, b"nope", "text/plain"), "HTTP 404", 3),
            (Reply(500, b"down", "text/plain"), "HTTP 500 (tried 3 times)", 3),
            (Reply(200, b"openapi: [unclosed", "application/yaml"), "invalid YAML", 1),
        ],
    )
    def test_fetch_errors(self, tmp_path: Path, reply: Reply, expected: str, code: int):
        with HttpServer() as server:
            server.routes["/spec"] = reply
            proc = run_cli("generate", f"{server.url}/spec?token=abc", "--out", str(tmp_path / "o"), "--no-snapshot")
        assert proc.returncode == code
        line = one_line_error(proc)
        assert expected in line and "token=abc" not in line

    def test_connection_refused(self, tmp_path: Path):
        from harness.demo.process import free_port

        proc = run_cli(
            "generate", f"http://127.0.0.1:{free_port()}/spec.json", "--out", str(tmp_path / "o"), "--no-snapshot"
        )
        assert proc.returncode == 3
        assert "connection failed" in one_line_error(proc)

    def test_size_cap(self, tmp_path: Path):
        with HttpServer() as server:
            server.routes["/big.json"] = Reply(200, b" " * (65 * 1024 * 1024))
            proc = run_cli("generate", f"{server.url}/big.json", "--out", str(tmp_path / "o"), "--no-snapshot")
        assert proc.returncode == 3 and "byte cap" in one_line_error(proc)


def test_generated_code_has_no_unused_names_or_syntax_errors(tmp_path: Path):
    """Readable output: pyflakes-level clean (no unused imports, undefined names) as generated."""
    out = tmp_path / "lint"
    generate(REPO / "tests" / "data" / "readonly.json", out, "lint-me")
    for package in (COMMITTED_PACKAGE, out):
        proc = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--select", "F,E9", "--no-cache", str(package)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout


def _spec_with_ref(ref: str) -> dict:
    return minimal(
        **{
            "/a": {
                "get": {
                    "operationId": "a",
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": ref}}}}
                    },
                }
            }
        }
    )


def test_remote_refs_are_refused_unless_allowed(tmp_path: Path):
    served = []
    with HttpServer() as server:
        server.routes["/pet.json"] = lambda seen: (
            served.append(seen) or Reply(200, {"type": "object", "properties": {"id": {"type": "integer"}}})
        )
        spec = tmp_path / "remote.json"
        spec.write_text(json.dumps(_spec_with_ref(f"{server.url}/pet.json")))
        refused = run_cli("generate", str(spec), "--out", str(tmp_path / "o"), "--no-snapshot")
        assert refused.returncode == 1 and served == []  # the build fetched nothing
        assert "remote $ref" in one_line_error(refused) and "--allow-remote-refs" in refused.stderr
        allowed = run_cli(
            "generate",
            str(spec),
            "--out",
            str(tmp_path / "o"),
            "--no-snapshot",
            "--allow-remote-refs",
            "--allow-private-refs",  # the test server is on loopback
        )
        assert allowed.returncode == 0, allowed.stderr
        assert len(served) == 1


@pytest.mark.parametrize("ref", ["/etc/passwd", "file:///etc/hostname", "../../../../etc/passwd", "notes.txt"])
def test_local_file_refs_are_limited(tmp_path: Path, ref: str):
    spec = tmp_path / "local.json"
    spec.write_text(json.dumps(_spec_with_ref(ref)))
    (tmp_path / "notes.txt").write_text("secret")
    proc = run_cli("generate", str(spec), "--out", str(tmp_path / "o"), "--no-snapshot")
    assert proc.returncode == 1
    assert "$ref" in one_line_error(proc) and "secret" not in proc.stderr


def test_strict_fails_when_an_operation_would_be_skipped(tmp_path: Path):
    spec = tmp_path / "skip.json"
    spec.write_text(
        json.dumps(
            minimal(
                **{
                    "/a": {
                        "get": {
                            "operationId": "a",
                            "parameters": [{"name": "x", "in": "body"}],
                            "responses": {"200": {"description": "ok"}},
                        }
                    },
                    "/b": {"get": {"operationId": "b", "responses": {"200": {"description": "ok"}}}},
                }
            )
        )
    )
    lenient = run_cli("generate", str(spec), "--out", str(tmp_path / "o"), "--no-snapshot")
    assert lenient.returncode == 0 and "skipped GET /a: parameter 'x' is in 'body'" in lenient.stderr
    manifest = json.loads((tmp_path / "o" / "typed-mcp.json").read_text())
    assert manifest["skipped"] == [{"operation": "GET /a", "reason": "parameter 'x' is in 'body'"}]
    strict = run_cli("generate", str(spec), "--out", str(tmp_path / "s"), "--no-snapshot", "--strict")
    assert strict.returncode == 5 and "--strict" in one_line_error(strict) and not (tmp_path / "s").exists()


HEAVY = ("typed_mcp.pipeline", "typed_mcp.plan", "typed_mcp.spec", "jinja2", "mcp", "datamodel_code_generator", "httpx")


@pytest.mark.parametrize("args", [["version"], ["--help"], ["generate", "--help"], ["generate", "--no-such-option"]])
def test_help_version_and_usage_errors_load_none_of_the_pipeline(args):
    """`--help`, `version` and a mistyped option answer without importing the pipeline, the code
    generator or the MCP SDK (which took seconds on a busy machine before any output)."""
    probe = (
        "import sys\nfrom typed_mcp import cli\n"
        f"sys.argv = ['typed-mcp', *{args!r}]\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    loaded = proc.stdout.splitlines()[-1]
    assert loaded == "LOADED []", loaded


def test_help_shows_whole_option_names_and_literal_brackets():
    """The help is Click's plain text: option names are never cut at 80 columns, and text in square
    brackets is shown as written (rich's panels cut `--allow-private-refs` and took `[tool.typed-mcp]`
    for markup)."""
    proc = run_cli("generate", "--help", env={"COLUMNS": "80"})
    assert proc.returncode == 0
    assert "--allow-private-refs" in proc.stdout and "--no-allow-remote-refs" in proc.stdout
    assert "pyproject.toml with [tool.typed-mcp]" in " ".join(proc.stdout.split())
    assert "…" not in proc.stdout
