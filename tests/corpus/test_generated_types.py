"""Generated packages pass a type checker and are formatted as generated: mypy, with the package's own
configuration (mypy's default checks), and `ruff format --check` (the package's own ruff settings), on
the demo and on corpus packages of different kinds. The committed demo package is checked by
`make lint` too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import CORPUS, DEMO_CONFIG, REPO, run_cli

# (case, spec, extra generate options)
CASES = [
    # make lint checks the committed demo package so (and tests/e2e hold it equal to fresh output).
    pytest.param(
        "demo", REPO / "specs" / "weather-api.json", ["--config", str(DEMO_CONFIG)], id="demo", marks=pytest.mark.long
    ),
    # Swagger 2.0, converted on reading (174 operations).
    pytest.param("netlify", CORPUS / "netlify__swagger.yml", [], id="swagger2-netlify", marks=pytest.mark.long),
    # A big API (296 operations, 940 modules): optional fields that are not nullable, long descriptions.
    pytest.param("box", CORPUS / "box__openapi.json", [], id="big-box", marks=pytest.mark.long),
    # The data-tools profile, whose results are Annotated[CallToolResult, DataResult[Model]] (and which
    # copies _runtime/datatools.py), on an API with odd operation names (`getSiteBasicInfo`, `listLatestTopics`).
    pytest.param(
        "discourse",
        CORPUS / "apisguru__discourse.local.json",
        ["--profile", "data-tools"],
        id="data-tools-discourse",
        marks=pytest.mark.long,
    ),
]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize(("name", "spec", "options"), CASES)
def test_a_generated_package_passes_mypy_and_is_formatted(tmp_path: Path, name: str, spec: Path, options: list[str]):
    out = tmp_path / f"{name}-mcp"
    proc = run_cli("generate", str(spec), "--out", str(out), "--package-name", f"{name}-mcp", "--no-snapshot", *options)
    assert proc.returncode == 0, proc.stderr[-2000:]

    formatted = _run([sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "."], out)
    assert formatted.returncode == 0, formatted.stdout[-3000:] + formatted.stderr[-1000:]

    # From the package's folder, so that mypy reads the package's own configuration (its pyproject.toml),
    # never this repository's strict one; its cache out of the package.
    checked = _run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache"), "src"], out)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-1000:]
    assert "Success: no issues found" in checked.stdout
    assert "--profile" not in options or (out / "src" / f"{name}_mcp" / "_runtime" / "datatools.py").is_file()
