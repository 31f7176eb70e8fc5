"""The bundle's `server/lib/`: the package's dependencies installed from wheels with
`pip install --target`, cut down to what is the same on every machine that installs the same wheels."""

from __future__ import annotations

import shutil
import subprocess
import sys
from email.parser import HeaderParser
from pathlib import Path

from typed_mcp.errors import TypedMcpError


class VendorError(TypedMcpError):
    """pip could not install the package's dependencies."""

    exit_code = 9


def install(requirements: list[str], lib: Path, constraints: Path | None) -> None:
    """Install `requirements` into `lib` with this interpreter's pip: wheels only (no build step whose
    output could vary), no bytecode (the host's Python writes its own)."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--target", str(lib), "--no-compile", "--only-binary=:all:"]
    if constraints is not None:
        command += ["--constraint", str(constraints)]
    proc = subprocess.run([*command, *requirements], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise VendorError(f"pip install --target failed for {', '.join(requirements)}: {last[0][:300]}")
    tidy(lib)


def tidy(lib: Path) -> None:
    """Drop what depends on the machine that built the bundle: `bin/` (console scripts whose first line
    names this interpreter's path; the bundle runs `main.py`), any `__pycache__`, and the lines of
    each `RECORD` that name files outside `lib/` (those scripts)."""
    shutil.rmtree(lib / "bin", ignore_errors=True)
    for cache in sorted(lib.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache)
    for record in sorted(lib.glob("*.dist-info/RECORD")):
        lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
        record.write_text("".join(line for line in lines if not line.startswith("../")), encoding="utf-8")


def installed(lib: Path) -> list[str]:
    """`name==version` of every distribution in `lib`, sorted: the bundle's requirements.txt."""
    found = []
    for metadata in lib.glob("*.dist-info/METADATA"):
        headers = HeaderParser().parsestr(metadata.read_text(encoding="utf-8"))
        found.append(f"{headers['Name']}=={headers['Version']}")
    return sorted(found, key=str.lower)
