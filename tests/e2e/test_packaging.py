"""typed-mcp as a user installs it: the wheel holds only the product (`typed_mcp`, with its
templates) and works on its own; the toolchain is the locked one; edits of the code generator's
output fail loudly when its form changes."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from support import CORPUS, DEMO_CONFIG, REPO, build_wheel, generate, run_cli
from typed_mcp import guard
from typed_mcp.errors import ToolchainError
from typed_mcp.models import rewrite
from typed_mcp.pysource import PySource
from typed_mcp.write import CACHES


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    path = build_wheel(REPO, tmp_path_factory.mktemp("wheel"))
    assert path.name.startswith("typed_mcp-")
    return path


def test_the_wheel_holds_only_the_product(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"typed_mcp", f"typed_mcp-{metadata.version('typed-mcp')}.dist-info"}, tops
    modules = {name for name in names if name.endswith(".py")}
    assert "typed_mcp/cli.py" in modules and "typed_mcp/catalog/worker.py" in modules
    assert "typed_mcp/templates/package/server.py.j2" in names
    # The runtime every package copies, whole (its HTML too: the table views' template).
    assert {"typed_mcp/runtime/__init__.py", "typed_mcp/runtime/table_view.html"} <= set(names)
    harness = ("demo", "weather_api", "fidelity", "strict_run", "node_tools", "arguments", "corpus")
    # (the packages' runtime has an `arguments` module of its own: only the generator's modules are
    # looked at)
    generator = [m for m in modules if not m.startswith("typed_mcp/runtime/")]
    assert not [m for m in generator if any(word in m for word in harness)]
    # Nothing the wheel installs imports a development dependency.
    dev = {"fastapi", "uvicorn", "pytest", "hypothesis", "hypothesis_jsonschema", "jsonschema", "harness", "authlib"}
    with zipfile.ZipFile(wheel) as archive:
        for module in modules:
            tree = ast.parse(archive.read(module))
            imported = {
                (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
                for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0)
                for alias in node.names
            }
            # The packages' runtime may import what generated packages depend on (uvicorn through the
            # MCP SDK: the HTTP mode's deadlines are its protocol's).
            allowed = {"jsonschema", "uvicorn"} if module.startswith("typed_mcp/runtime/") else set()
            assert not imported & (dev - allowed), (module, imported & dev)


def test_the_installed_wheel_runs_alone(wheel: Path, tmp_path: Path):
    """Installed apart from the checkout, `typed-mcp --version`, `python -m typed_mcp` and a whole
    generation work, with the templates from inside the wheel."""
    target = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    env = {**os.environ, "PYTHONPATH": str(target), "TYPED_MCP_NO_CACHE": "1"}
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import typed_mcp, typed_mcp.resources as r; print(typed_mcp.__file__); print(r.templates_dir())",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    module_file, templates = where.stdout.split()
    assert module_file.startswith(str(target)) and templates.startswith(str(target)), where.stdout
    script = subprocess.run(
        [str(target / "bin" / "typed-mcp"), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert script.stdout.strip() == f"typed-mcp {metadata.version('typed-mcp')}", script.stderr
    out = tmp_path / "weather-mcp"
    run = run_cli(
        "generate", str(REPO / "specs" / "weather-api.json"), "--out", str(out), "--package-name", "weather-mcp",
        "--config", str(DEMO_CONFIG), env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    committed = REPO / "generated" / "weather-mcp"
    for path in committed.rglob("*"):
        if path.is_file() and not CACHES.intersection(path.relative_to(committed).parts):
            assert (out / path.relative_to(committed)).read_bytes() == path.read_bytes(), path


def test_the_toolchain_is_the_locked_one():
    """Every package of the lock file is installed at its locked version (make venv installs with it):
    byte-identical output depends on it."""
    pins = dict(
        re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line).groups()
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for name in ("mcp", "pydantic", "pydantic-core", "datamodel-code-generator", "jinja2", "ruff"):
        assert any(pin.lower().replace("_", "-") == name for pin in pins), f"{name} is not locked"
    wrong = {
        name: (version, metadata.version(name)) for name, version in pins.items() if metadata.version(name) != version
    }
    assert not wrong, f"installed versions differ from constraints.txt (run `make venv`): {wrong}"


def _edited(source: str, edit) -> tuple[str, list[str]]:
    """`source` with one of the models' edits (placed by the syntax tree) applied."""
    code, tree = PySource(source), ast.parse(source)
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    edits, names = edit(code, imports if edit is rewrite.runtime_types else tree)
    return code.edited(edits), names


def test_an_import_form_the_runtime_edit_does_not_know_fails_loudly():
    known = (
        "from pydantic import EmailStr, Field\nfrom .base import OpenModel\n\n\nclass A(OpenModel):\n    e: EmailStr\n"
    )
    edited, moved = _edited(known, rewrite.runtime_types)
    assert moved == ["EmailStr"] and "EmailStr" not in edited.split("\n\n")[0]
    # Another form would bring the library's type in past the edit: the models' guard refuses any import
    # but the code generator's known ones, so generation stops instead.
    changed = "import pydantic\nfrom .base import OpenModel\n\n\nclass A(OpenModel):\n    e: pydantic.EmailStr\n"
    with pytest.raises(guard.Refused, match="an import statement"):
        guard.check_models(changed)


def test_a_property_count_form_the_edit_does_not_know_fails_loudly():
    low = "typed-mcp-min-properties"
    known = f"class A(OpenModel):\n    model_config = ConfigDict(\n        json_schema_extra={{'{low}': 1}},\n    )\n"
    edited, imported = _edited(known, rewrite.property_counts)
    assert low not in edited and "CountedModel" in edited and imported
    changed = f"class A(OpenModel):\n    model_config = ConfigDict(\n        json_schema_extra=dict(x={{'{low}': 1}}),\n    )\n"
    with pytest.raises(ToolchainError, match="property counts"):
        _edited(changed, rewrite.property_counts)


@pytest.mark.parametrize("spec", ["apisguru__docker.com_engine.json", "oai__v3.0-petstore-expanded.yaml"])
def test_generated_packages_pass_their_own_lint(spec: str, tmp_path: Path):
    """A generated package passes ruff with the configuration in its own pyproject.toml."""
    out = tmp_path / "package"
    generate(CORPUS / spec, out, "lint-mcp", "--no-verify")
    assert "[tool.ruff.lint]" in (out / "pyproject.toml").read_text()
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=out, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_tool_caches_in_a_committed_package_are_no_drift(tmp_path: Path):
    """Running ruff, mypy or pytest inside a generated package leaves caches that the drift check ignores."""
    package = tmp_path / "weather-mcp"
    shutil.copytree(REPO / "generated" / "weather-mcp", package)
    for cache in (".ruff_cache", ".mypy_cache", "src/weather_mcp/__pycache__"):
        (package / cache).mkdir(parents=True, exist_ok=True)
        (package / cache / "entry").write_text("cached")
    proc = run_cli(
        "check", str(REPO / "specs" / "weather-api.json"), "--out", str(package), "--package-name", "weather-mcp",
        "--config", str(DEMO_CONFIG),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (package / "stray.txt").write_text("not generated")
    assert (
        run_cli(
            "check",
            str(REPO / "specs" / "weather-api.json"),
            "--out",
            str(package),
            "--package-name",
            "weather-mcp",
            "--config",
            str(DEMO_CONFIG),
        ).returncode
        == 1
    )
