"""The plan is closed: rendering reads the plan alone (never the spec), the plan is frozen once
built, and the config is read once, by a module that needs nothing of the plan, into the options
both `generate` and `check` run on."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO
from typed_mcp import names, project
from typed_mcp.config import load_config
from typed_mcp.errors import ConfigError
from typed_mcp.plan.build import plan
from typed_mcp.plan.curation import Curation
from typed_mcp.profile import Profile
from typed_mcp.spec.load import load
from typed_mcp.spec.normalize import normalize

GENERATOR = REPO / "generator" / "typed_mcp"
WEATHER = REPO / "specs" / "weather-api.json"


def imported_modules(text: str, package: str) -> set[str]:
    """Every module the source `text` of a module of `package` imports, at any depth of its code
    (function-level imports included), as absolute names."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


# What rendering may not reach: the spec, and the pipeline that holds it.
FORBIDDEN = ("typed_mcp.spec", "typed_mcp.pipeline")


def test_rendering_never_imports_the_spec():
    """What render needs from the spec's schemas is resolved while planning (plan/resolved.py): no
    module of render/ imports typed_mcp.spec or the pipeline, not even inside a function."""
    modules = sorted((GENERATOR / "render").glob("*.py"))
    assert len(modules) >= 5
    reaching = {
        path.name: sorted(
            name
            for name in imported_modules(path.read_text(encoding="utf-8"), "typed_mcp.render")
            if name.startswith(FORBIDDEN)
        )
        for path in modules
    }
    assert {name: found for name, found in reaching.items() if found} == {}


def test_the_import_walk_sees_relative_and_function_level_imports():
    """The walk above finds the imports it must refuse, however and wherever they are written."""
    text = "import json\n\ndef f():\n    from ..spec.normalize import Document\n    import typed_mcp.pipeline\n"
    found = imported_modules(text, "typed_mcp.render")
    assert {"typed_mcp.spec.normalize", "typed_mcp.pipeline", "json"} <= found
    assert "typed_mcp.plan.ir" in imported_modules("from ..plan.ir import ApiPlan\n", "typed_mcp.render")


def test_the_plan_is_frozen_once_built():
    doc = normalize(load(str(WEATHER)))
    api = plan(doc, package_name="weather-mcp", module="weather_mcp", curation=Curation(None, []))
    with pytest.raises(dataclasses.FrozenInstanceError):
        api.profile = Profile.DATA_TOOLS  # type: ignore[misc]
    assert isinstance(api.operations, tuple) and isinstance(api.warnings, tuple) and isinstance(api.curation, tuple)
    # What render reads of the schemas is on the plan: the forecast answer is a list of rows, a table
    tools = {op.tool_name: op for op in api.operations}
    assert tools["get_forecast"].returns_array and tools["get_forecast"].table == (
        (),
        ("temperature", "humidity", "conditions"),
    )
    assert "city" in tools["create_report"].body_words  # the report's properties, words search indexes
    assert api.profile is Profile.DEFAULT


@pytest.mark.slow
def test_reading_a_config_loads_nothing_of_the_plan(tmp_path: Path):
    """`init`, the command line and project.py read a TOML file without importing the plan layer."""
    config = tmp_path / "typed-mcp.toml"
    config.write_text('source = "spec.json"\nout = "pkg"\nprofile = "data-tools"\n[exclude]\ntags = ["admin"]\n')
    probe = (
        "import sys\nfrom pathlib import Path\nfrom typed_mcp.config import load_config\n"
        f"loaded = load_config(Path({str(config)!r}))\n"
        "print(loaded.config.profile.value, sorted(m for m in sys.modules if m.startswith('typed_mcp.plan')))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.split() == ["data-tools", "[]"]


def test_generate_and_check_build_their_options_in_one_place_from_the_config_read_once(tmp_path, monkeypatch):
    config = tmp_path / "typed-mcp.toml"
    config.write_text('source = "https://api.example.com/openapi"\nout = "pkg"\nsnapshot = "specs/api"\n')
    reads = []
    original = Path.open

    def counting_open(self: Path, *args, **kwargs):
        if self == config:
            reads.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting_open)
    made = project.options(config, project.Asked(), cache=False)
    assert len(reads) == 1  # the pipeline takes the loaded config from the options: it never reads it again
    assert made.config is not None and made.config.path == config
    assert made.source == "https://api.example.com/openapi" and made.out == tmp_path / "pkg"
    assert made.snapshot == tmp_path / "specs" / "api.json" and made.default_snapshot  # the source's format
    assert made.chosen_profile is Profile.DEFAULT
    assert project.options(config, project.Asked(), profile=Profile.DATA_TOOLS).chosen_profile is (Profile.DATA_TOOLS)
    unsaved = project.options(config, project.Asked(), save_snapshot=False)
    assert unsaved.snapshot is None and not unsaved.default_snapshot


def test_the_configs_profile_is_the_one_profile_type(tmp_path: Path):
    config = tmp_path / "typed-mcp.toml"
    config.write_text('profile = "data-tools"\n')
    loaded = load_config(config)
    assert loaded.config.profile is Profile.DATA_TOOLS
    assert project.options(config, project.Asked("spec.json", tmp_path / "o")).chosen_profile is Profile.DATA_TOOLS
    config.write_text('profile = "tables"\n')
    with pytest.raises(ConfigError, match="profile.*data-tools"):
        load_config(config)


def _planned(tmp_path: Path, spec: dict):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return plan(normalize(load(str(path))), package_name="x-mcp", module="x_mcp")


def test_a_skipped_operation_leaves_no_schema_and_an_inline_one_never_takes_a_components_key(tmp_path: Path):
    # POST /a registers its inline body, then fails on its answer's `content`: the body goes with it.
    # GET /b's inline answer wants `GetBResponse`; a component has that key and another has the key
    # it would take next, `GetBResponse<hash>`: the answer takes a third, and both components stay.

    hashed = "GetBResponse" + names.short_hash("GetBResponse", 6).upper()
    inline = {"type": "object", "properties": {"inline": {"type": "string"}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "x", "version": "1"},
        "paths": {
            "/a": {
                "post": {
                    "operationId": "post_a",
                    "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                    "responses": {"200": {"description": "ok", "content": "not a map"}},
                }
            },
            "/b": {
                "get": {
                    "operationId": "get_b",
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": inline}}}},
                }
            },
        },
        "components": {
            "schemas": {
                "GetBResponse": {"type": "object", "properties": {"one": {"type": "integer"}}},
                hashed: {"type": "object", "properties": {"two": {"type": "integer"}}},
            }
        },
    }
    api = _planned(tmp_path, spec)
    assert [s.key for s in api.skipped] == ["POST /a"]
    assert not any(key.startswith("PostA") for key in api.schemas), list(api.schemas)
    (op,) = api.operations
    answer = op.response.schema_key
    assert answer not in ("GetBResponse", hashed) and api.schemas[answer] == inline
