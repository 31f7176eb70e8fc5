"""MkDocs hook: the pages that are produced, not written, so that they cannot drift from what they describe.

- reference/cli.md from the Typer app (typed_mcp.cli.app), the way `typer ... utils docs` writes it;
- reference/config.md from the config model (typed_mcp.config.Config): every key with its type,
  default and the comment the model gives it;
- reference/server.md from the demo package (generated/weather-mcp): its command line's own parser and
  the environment variables its README lists;
- the benchmark pages: the files the benchmarks write (bench/*.md, reports/*.md), as committed, and the
  MCP Apps screenshot the browser test takes.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import os
import re
import sys
import typing
from pathlib import Path

import typer
from mkdocs.structure.files import File, Files
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]

# page in the site -> (file the benchmark writes, the command that writes it)
INCLUDED = {
    "benchmarks/results.md": ("bench/RESULTS.md", "make bench (bench/bench.py)"),
    "benchmarks/load.md": ("bench/LOAD.md", "make load (bench/load.py)"),
    "benchmarks/modes.md": ("bench/MODES.md", "bench/modes.py"),
    "benchmarks/generation.md": ("bench/GENERATION.md", "bench/generation.py"),
    "benchmarks/agent-trial.md": ("bench/agent_trial/README.md", "bench/agent_trial"),
    "benchmarks/directory.md": ("reports/directory.md", "make directory"),
    "benchmarks/corpus-report.md": ("reports/corpus.md", "make corpus"),
    "benchmarks/fidelity-big.md": ("reports/fidelity-big.md", "make corpus (the 10 big specs)"),
}
ASSETS = {"assets/mcp-app-table.png": "reports/mcp-app-table.png"}


def on_files(files: Files, config) -> Files:
    def add(uri: str, content: str | None = None, source: Path | None = None) -> None:
        if source is None:
            files.append(File.generated(config, uri, content=content))
        else:
            files.append(File.generated(config, uri, abs_src_path=str(source)))

    add("reference/cli.md", cli_reference())
    add("reference/config.md", config_reference())
    add("reference/server.md", server_reference())
    for uri, (path, command) in INCLUDED.items():
        text = (ROOT / path).read_text()
        note = f'!!! note "Written by `{command}`"\n    This page is `{path}` as committed: the run\'s own output.\n\n'
        add(uri, demote_title(text, note))
    for uri, path in ASSETS.items():
        add(uri, source=ROOT / path)
    return files


def demote_title(text: str, note: str) -> str:
    """The file's first heading stays the page title; the note goes right under it."""
    first, _, rest = text.partition("\n")
    if first.startswith("# "):
        return f"{first}\n\n{note}{rest}"
    return f"{note}{text}"


def cli_reference() -> str:
    from typer.cli import get_docs_for_click

    from typed_mcp.cli import app

    command = typer.main.get_command(app)
    with typer.Context(command) as ctx:
        body = get_docs_for_click(obj=command, ctx=ctx, name="typed-mcp", title="CLI reference")
    intro = "Generated from the Typer app (`typed_mcp.cli.app`) when the site is built.\n\n"
    title, _, rest = body.strip().partition("\n")
    return f"{title}\n\n{intro}{rest.strip()}\n"


def config_reference() -> str:
    from typed_mcp.config import Config

    lines = [
        "# Config reference",
        "",
        "Every key of `typed-mcp.toml` (or `[tool.typed-mcp]` in a `pyproject.toml`), generated from the "
        "config model (`typed_mcp.config.Config`) when the site is built. An unknown key is an "
        "error. See [Curation](../curation.md) for how the config combines with `x-mcp` and overlays.",
        "",
        "| key | type | default | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for key, annotation, default, comment in walk(Config, ""):
        lines.append(f"| `{key}` | {cell(type_name(annotation))} | {cell(default)} | {cell(comment)} |")
    return "\n".join(lines) + "\n"


DEMO = ROOT / "generated" / "weather-mcp"


def server_reference() -> str:
    """The generated server's flags (its argparse parser's help, as `python -m weather_mcp --help`
    prints it) and environment variables (the tables of the package's README), for the demo package."""
    sys.path.insert(0, str(DEMO / "src"))
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal: the same page on any machine
    try:
        help_text = importlib.import_module("weather_mcp.__main__").parser().format_help()
    finally:
        sys.path.remove(str(DEMO / "src"))
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    lines = [
        "# Server flags and environment variables",
        "",
        "Generated when the site is built, from the demo package (`generated/weather-mcp`): the help of its "
        "command line's own parser (`weather_mcp.__main__.parser`) and the environment variables its README "
        "lists. In your package, `weather_mcp` is your module and `WEATHER_MCP` its prefix (the package "
        "name in capitals); the credential variables are those of your API's security schemes. What the "
        "flags do: [The generated server](../server.md) and [Hosting](../hosting.md).",
        "",
        "## Command line",
        "",
        "```text",
        help_text.rstrip(),
        "```",
        "",
        "## Environment variables",
    ]
    for heading, table in environment_tables((DEMO / "README.md").read_text()):
        lines += ["", f"### {heading}", "", *table]
    return "\n".join(lines) + "\n"


def environment_tables(readme: str) -> list[tuple[str, list[str]]]:
    """Each `| environment variable | meaning |` table of a generated README, under its section's title."""
    found: list[tuple[str, list[str]]] = []
    heading = ""
    lines = readme.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("#"):
            heading = line.lstrip("# ").strip()
        elif line == "| environment variable | meaning |":
            end = index
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            found.append((heading, lines[index:end]))
    return found


def walk(model: type[BaseModel], prefix: str):
    comments = field_comments(model)
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        annotation = field.annotation
        nested = nested_model(annotation)
        if nested is not None and typing.get_origin(annotation) is None:
            yield (
                key,
                annotation,
                "",
                comments.get(name, "") or (inspect.cleandoc(nested.__dict__.get("__doc__") or "")),
            )
            yield from walk(nested, key + ".")
        elif nested is not None:  # dict[str, Model]: one table per entry
            yield key, annotation, "`{}`", comments.get(name, "")
            yield from walk(nested, key + ".NAME.")
        else:
            value = field.default.value if isinstance(field.default, enum.Enum) else field.default
            default = "required" if field.is_required() else f"`{value!r}`"
            yield key, annotation, default, comments.get(name, "")


def nested_model(annotation) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The comments the model's source puts on each field: a trailing one, or the lines right above."""
    comments: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(model).splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
            continue
        match = re.match(r"(\w+)\s*:[^#]*?(?:#\s*(.*))?$", stripped)
        if match and match.group(1) in model.model_fields:
            comments[match.group(1)] = " ".join([*above, match.group(2) or ""]).strip()
        above = []
    return comments


def type_name(annotation) -> str:
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):  # its values, as a Literal shows them
        return "`" + repr(typing.Literal[tuple(member.value for member in annotation)]).removeprefix("typing.") + "`"
    text = getattr(annotation, "__name__", None) if typing.get_origin(annotation) is None else None
    # Module paths say nothing to a config's author: `typed_mcp.config.OperationConfig` -> `OperationConfig`.
    return "`" + re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", text or repr(annotation)) + "`"


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
