"""The `typed-mcp` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from generator import __version__
from generator.errors import SpecError, TypedMcpError
from generator.load import is_url

app = typer.Typer(
    name="typed-mcp",
    help="Generate a typed MCP server package from an OpenAPI document.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise SpecError(f"--header must look like 'Name: value' (got a value without ':')")
        headers[name.strip()] = content.strip()
    return headers


def _fail(exc: TypedMcpError) -> None:
    err.print(f"[bold red]error:[/] {exc}", markup=True, soft_wrap=True) if err.is_terminal else print(f"error: {exc}", file=sys.stderr)
    raise typer.Exit(exc.exit_code)


@app.command()
def generate(
    source: Annotated[str, typer.Argument(help="OpenAPI document: a file (JSON/YAML) or an http(s) URL")],
    out: Annotated[Path, typer.Option("--out", "-o", help="folder to write the package project to")],
    package_name: Annotated[Optional[str], typer.Option(help="distribution name (default: from the API title)")] = None,
    header: Annotated[list[str], typer.Option("--header", "-H", help="'Name: value' sent when fetching a URL")] = [],  # noqa: B006
    snapshot: Annotated[
        Optional[Path], typer.Option(help="save the document here (default for URLs: specs/<package>.json|yaml)")
    ] = None,
    no_snapshot: Annotated[bool, typer.Option("--no-snapshot", help="do not save a fetched document")] = False,
    strict: Annotated[bool, typer.Option(help="fail when any operation would be skipped")] = False,
    verify: Annotated[bool, typer.Option(help="start the generated server and check its tools before writing")] = True,
    allow_remote_refs: Annotated[bool, typer.Option(help="fetch http(s) $refs (refused by default)")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="print nothing on success")] = False,
) -> None:
    """Write a complete MCP server project for SOURCE to OUT (replaced only when everything succeeded)."""
    from generator.pipeline import generate as run, package_names

    try:
        if snapshot is None and is_url(source) and not no_snapshot:
            snapshot = Path("specs") / (package_names(package_name, "api")[0] if package_name else "openapi")
        with err.status("generating", spinner="dots") if err.is_terminal and not quiet else _Null() as status:

            def step(text: str) -> None:
                if status is not None:
                    status.update(text)

            result = run(
                source, out, package_name=package_name, headers=_headers(header), snapshot=_with_suffix(snapshot, source),
                strict=strict, verify=verify, allow_remote_refs=allow_remote_refs, step=step,
            )
    except TypedMcpError as exc:
        _fail(exc)
        return
    if quiet:
        return
    api = result.plan
    structured = sum(1 for op in api.operations if op.response.kind == "json")
    seconds = sum(result.timings.values())
    print(
        f"{api.package_name}: {len(api.operations)} tools ({structured} with outputSchema), "
        f"{len(api.skipped)} skipped, in {seconds:.1f}s -> {out}",
        file=sys.stderr,
    )
    for skipped in api.skipped:
        print(f"  skipped {skipped.key}: {skipped.reason}", file=sys.stderr)


def _with_suffix(snapshot: Path | None, source: str) -> Path | None:
    if snapshot is None or snapshot.suffix:
        return snapshot
    return snapshot.with_suffix(".yaml" if source.split("?")[0].endswith((".yaml", ".yml")) else ".json")


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@app.command()
def version() -> None:
    """Print the generator version."""
    print(f"typed-mcp {__version__}")


def main() -> None:
    app()
