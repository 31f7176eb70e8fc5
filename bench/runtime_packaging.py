"""Copy the runtime into every package, or depend on a `typed-mcp-runtime` distribution pinned exactly?

Builds the committed demo package both ways and measures each: wheel sizes, what an install adds
to a fresh virtual environment, and the time from starting the server over stdio to the answer of
its first tool call (the MCP Python SDK client against the demo API on 127.0.0.1), the two variants
interleaved. The "depend" variant is the same package with `_runtime/` moved into a distribution of
its own (`typed_mcp_runtime`) and the package's imports pointed at it: the same bytes of code, only
installed apart.

    .venv/bin/python bench/runtime_packaging.py [--runs 7]

Prints a Markdown table (the README quotes it: "Why every package copies the runtime")."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "generated" / "weather-mcp"
sys.path.insert(0, str(ROOT / "tests"))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import typed_mcp  # noqa: E402
from harness.demo.process import demo_api  # noqa: E402

RUNTIME_PYPROJECT = """[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "typed-mcp-runtime"
version = "{version}"
requires-python = ">=3.10"
dependencies = {dependencies}

[tool.hatch.build.targets.wheel]
packages = ["src/typed_mcp_runtime"]
"""


def _dependencies(pyproject: str) -> list[str]:
    block = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    return re.findall(r'^\s*"([^"]+)"', block, re.MULTILINE)


def depend_variant(work: Path) -> tuple[Path, Path]:
    """The demo package without `_runtime/` (its imports pointed at `typed_mcp_runtime`) and the
    runtime's own project."""
    package = work / "depend" / "weather-mcp"
    shutil.copytree(DEMO, package, ignore=shutil.ignore_patterns("__pycache__"))
    runtime = work / "depend" / "typed-mcp-runtime"
    (runtime / "src").mkdir(parents=True)
    shutil.move(package / "src" / "weather_mcp" / "_runtime", runtime / "src" / "typed_mcp_runtime")
    for path in (package / "src").rglob("*.py"):
        text = path.read_text()
        text = re.sub(r"from \.+_runtime", "from typed_mcp_runtime", text)
        text = text.replace("weather_mcp._runtime", "typed_mcp_runtime")
        path.write_text(text)
    pyproject = (package / "pyproject.toml").read_text()
    dependencies = _dependencies(pyproject)
    (runtime / "pyproject.toml").write_text(
        RUNTIME_PYPROJECT.format(version=typed_mcp.__version__, dependencies=repr(dependencies).replace("'", '"'))
    )
    pin = f'"typed-mcp-runtime=={typed_mcp.__version__}",\n'
    (package / "pyproject.toml").write_text(pyproject.replace("dependencies = [\n", "dependencies = [\n    " + pin, 1))
    return package, runtime


def build(project: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(project)],
        check=True,
        capture_output=True,
    )
    return next(out.glob(project.name.replace("-", "_") + "-*.whl"))


def install(venv: Path, wheels: list[Path]) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-c", str(ROOT / "constraints.txt")]
        + [str(wheel) for wheel in wheels],
        check=True,
    )
    return next((venv / "lib").glob("python3*/site-packages"))


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


async def first_call(python: Path, base_url: str) -> float:
    """Seconds from starting the server to its first tool call's answer."""
    params = StdioServerParameters(
        command=str(python), args=["-m", "weather_mcp", "--base-url", base_url], env={"PATH": os.environ["PATH"]}
    )
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("get_weather", {"city": "London"})
        assert not result.is_error, result
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="typed-mcp-packaging-") as tmp:
        work = Path(tmp)
        package, runtime = depend_variant(work)
        copy_wheel = build(DEMO, work / "wheels-copy")
        depend_wheels = [build(package, work / "wheels-depend"), build(runtime, work / "wheels-depend")]
        copy_site = install(work / "venv-copy", [copy_wheel])
        depend_site = install(work / "venv-depend", depend_wheels)
        pythons = {"copy": work / "venv-copy" / "bin" / "python", "depend": work / "venv-depend" / "bin" / "python"}
        times: dict[str, list[float]] = {"copy": [], "depend": []}
        os.chdir(ROOT / "tests")  # the demo API runs as `python -m harness.demo.weather_api`
        with demo_api() as base_url:
            for name in pythons:  # one warm-up each: the first start compiles bytecode
                asyncio.run(first_call(pythons[name], base_url))
            for _ in range(args.runs):
                for name, python in pythons.items():
                    times[name].append(asyncio.run(first_call(python, base_url)))
        rows = {
            "copy": (
                copy_wheel.stat().st_size,
                size(copy_site / "weather_mcp"),
                size(copy_site),
            ),
            "depend": (
                sum(wheel.stat().st_size for wheel in depend_wheels),
                size(depend_site / "weather_mcp") + size(depend_site / "typed_mcp_runtime"),
                size(depend_site),
            ),
        }
    print(f"| runtime | wheels | installed (package + runtime) | whole venv | first call, median of {args.runs} |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (wheels, installed, venv) in rows.items():
        median = statistics.median(times[name])
        print(f"| {name} | {wheels:,} B | {installed:,} B | {venv / 1e6:.1f} MB | {median:.2f} s |")


if __name__ == "__main__":
    main()
