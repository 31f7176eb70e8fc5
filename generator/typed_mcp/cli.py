"""The `typed-mcp` command line: parses the options into one `GenerateOptions`, runs, reports."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from typed_mcp import __version__
from typed_mcp.errors import SpecError, TypedMcpError
from typed_mcp.profile import Profile

if TYPE_CHECKING:
    from rich.console import Console

    from typed_mcp.pipeline import Result

# The pipeline, the MCP SDK, the code generator and rich are imported by the commands that use them,
# not here: `--help`, `version` and a mistyped option answer without loading them (seconds on a busy machine).
app = typer.Typer(
    name="typed-mcp",
    help="Generate a typed MCP server package from an OpenAPI document.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: rich's panels cut option names at 80 columns and read `[tool.x]` as markup.
    rich_markup_mode=None,
)
err: Console | None = None  # standard error as rich writes it, made on first use (see _console)


def _console() -> Console:
    global err
    if err is None:
        from rich.console import Console

        err = Console(stderr=True, highlight=False)
    return err


CACHE_HELP = (
    "reuse models and tool catalogs computed before from the same inputs, and leave a folder that already holds"
    " what they generate as it is (~/.cache/typed-mcp, or TYPED_MCP_CACHE_DIR)"
)
# Options shared by several commands, spelled once.
Header = Annotated[list[str], typer.Option("--header", "-H", help="'Name: value' sent when fetching a URL")]
Cache = Annotated[bool, typer.Option("--cache/--no-cache", help=CACHE_HELP)]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="curation config: a typed-mcp.toml, or a pyproject.toml with [tool.typed-mcp] (docs/curation.md)",
    ),
]
Overlays = Annotated[
    list[Path],
    typer.Option("--overlay", help="an OpenAPI Overlay 1.0 document applied to the spec first (repeatable, in order)"),
]


ProfileOption = Annotated[
    Profile | None,
    typer.Option(
        help="data-tools: each result is {sources, data, table} (docs/data-tools.md); default: the config's, or default"
    ),
]
ToolPrefix = Annotated[
    str, typer.Option(help="start every tool name with this (e.g. gh: gh_repos_get), for hosts that mix servers")
]


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise SpecError("--header must look like 'Name: value' (got a value without ':')")
        headers[name.strip()] = content.strip()
    return headers


def _shared(
    header: list[str],
    package_version: str | None,
    use_cache: bool,
    tool_prefix: str,
    overlay: list[Path],
    profile: Profile | None,
) -> dict[str, Any]:
    """The options `generate` and `check` both take, under their GenerateOptions names."""
    return {
        "headers": _headers(header),
        "version": package_version,
        "cache": use_cache,
        "tool_prefix": tool_prefix,
        "overlays": tuple(overlay),
        "profile": profile,
    }


def _fail(exc: TypedMcpError) -> None:
    if sys.stderr.isatty() and _console().is_terminal:
        _console().print(f"[bold red]error:[/] {exc}", markup=True, soft_wrap=True)
    else:
        print(f"error: {exc}", file=sys.stderr)
    raise typer.Exit(exc.exit_code)


def _version_callback(value: bool) -> None:
    if value:
        print(f"typed-mcp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """Generate a typed MCP server package from an OpenAPI document."""


@app.command()
def generate(
    source: Annotated[
        str | None,
        typer.Argument(help="OpenAPI document: a file (JSON/YAML) or an http(s) URL (default: the config's)"),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="folder to write the package project to (default: the config's)")
    ] = None,
    package_name: Annotated[str | None, typer.Option(help="distribution name (default: from the API title)")] = None,
    header: Header = [],  # noqa: B006 (typer reads the default; it is never mutated)
    snapshot: Annotated[
        Path | None, typer.Option(help="save the document here (default for URLs: specs/<package>.json|yaml)")
    ] = None,
    no_snapshot: Annotated[bool, typer.Option("--no-snapshot", help="do not save a fetched document")] = False,
    strict: Annotated[
        bool, typer.Option(help="fail when any operation would be skipped or any schema read in a degraded way")
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(help="check the generated server's tool listing (every tool, every outputSchema) before writing"),
    ] = True,
    allow_remote_refs: Annotated[bool, typer.Option(help="fetch http(s) $refs (refused by default)")] = False,
    allow_private_refs: Annotated[
        bool, typer.Option(help="with --allow-remote-refs: also from loopback, private and link-local addresses")
    ] = False,
    ref_root: Annotated[
        Path | None, typer.Option(help="local $refs may not leave this folder (default: the spec file's folder)")
    ] = None,
    package_version: Annotated[
        str | None, typer.Option(help="package version (default: info.version as PEP 440)")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="print nothing on success")] = False,
    use_cache: Cache = True,
    tool_prefix: ToolPrefix = "",
    config: ConfigFile = None,
    overlay: Overlays = [],  # noqa: B006 (typer reads the default; it is never mutated)
    profile: ProfileOption = None,
) -> None:
    """Write a complete MCP server project for SOURCE to OUT (replaced only when everything succeeded)."""
    from typed_mcp import project
    from typed_mcp.pipeline import generate as run

    try:
        options = project.options(
            config,
            project.Asked(source, out, package_name, snapshot),
            save_snapshot=not no_snapshot,
            strict=strict,
            verify=verify,
            allow_remote_refs=allow_remote_refs,
            allow_private_refs=allow_private_refs,
            ref_root=ref_root,
            **_shared(header, package_version, use_cache, tool_prefix, overlay, profile),
        )
        with _progress(quiet) as step:
            result = run(options, step=step)
    except TypedMcpError as exc:
        _fail(exc)
        return
    if not quiet:
        _summary(result, options.out)
        _budget(result)


def _summary(result: Result, out: Path) -> None:
    summary = result.summary
    seconds = sum(result.timings.values())
    unchanged = " (unchanged: the folder already held what these inputs generate)" if result.plan is None else ""
    print(
        f"{summary.package_name}: {summary.tools} tools ({summary.structured} with outputSchema), "
        f"{len(summary.skipped)} skipped, in {seconds:.1f}s -> {out}{unchanged}",
        file=sys.stderr,
    )
    if result.snapshot is not None:
        print(f"  snapshot of the spec -> {result.snapshot}", file=sys.stderr)
    if summary.registry_name is None:
        hint = 'to list the server, give the config [registry] name = "io.github.OWNER/NAME"'
        print(f"  MCP Registry: no server.json ({hint})", file=sys.stderr)
    else:
        print(f"  MCP Registry: server.json for {summary.registry_name}", file=sys.stderr)
    for key, reason in summary.skipped:
        print(f"  skipped {key}: {reason}", file=sys.stderr)
    for warning in summary.warnings:
        print(f"  warning: {warning}", file=sys.stderr)
    for note in summary.degraded:
        print(f"  degraded {note}", file=sys.stderr)
    if summary.curated:
        print(
            f"  curation: {summary.excluded} operation(s) excluded, {summary.changed} changed (see typed-mcp.json)",
            file=sys.stderr,
        )


def _budget(result: Result) -> None:
    """The token budget of the catalog: its size, the biggest tools, advice when it is too big."""
    from rich.table import Table

    from typed_mcp.catalog import budget

    err = _console()
    figures = result.summary.catalog
    if not err.is_terminal:
        for line in figures.lines():
            print(line, file=sys.stderr)
        return
    err.print(figures.lines()[0], soft_wrap=True)
    table = Table(show_edge=False)
    table.add_column("biggest tools")
    table.add_column("bytes", justify="right")
    table.add_column("~tokens", justify="right")
    for name, count in figures.biggest:
        table.add_row(name, f"{count:,}", f"{budget.approximate_tokens(count):,}")
    err.print(table)
    if (advice := figures.advice()) is not None:
        err.print(f"[bold yellow]advice:[/] {advice}", markup=True, soft_wrap=True)


@contextlib.contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str], None]]:
    """A `step(text)` for the pipeline: on a terminal, one live line with the stage (and how far a
    counted stage got) and the time since the start; elsewhere, or with --quiet, silence."""
    if quiet or not sys.stderr.isatty() or not _console().is_terminal:
        yield lambda _text: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=_console(), transient=True
    ) as progress:
        task = progress.add_task("generating")
        yield lambda text: progress.update(task, description=text)


@app.command()
def check(
    source: Annotated[
        str | None, typer.Argument(help="the live spec URL, or the snapshot file (default: the config's)")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="the committed package folder (default: the config's)")
    ] = None,
    package_name: Annotated[str | None, typer.Option(help="as given to generate")] = None,
    snapshot: Annotated[
        Path | None, typer.Option(help="the committed spec snapshot to compare a fetched spec with")
    ] = None,
    header: Header = [],  # noqa: B006 (typer reads the default; it is never mutated)
    package_version: Annotated[str | None, typer.Option(help="as given to generate")] = None,
    use_cache: Cache = True,
    tool_prefix: ToolPrefix = "",
    config: ConfigFile = None,
    overlay: Overlays = [],  # noqa: B006 (typer reads the default; it is never mutated)
    profile: ProfileOption = None,
) -> None:
    """Exit 0 when SOURCE regenerates exactly the committed package (and snapshot); 1 on drift, with a summary."""
    from typed_mcp import compare, project
    from typed_mcp.catalog import diff
    from typed_mcp.spec.load import shown

    try:
        asked = project.Asked(source, out, package_name, snapshot)
        shared = _shared(header, package_version, use_cache, tool_prefix, overlay, profile)
        options = project.options(config, asked, **shared)
        drift = compare.check(options)
    except TypedMcpError as exc:
        _fail(exc)
        return
    source, out, snapshot = options.source, options.out, options.snapshot
    if not drift.problems:
        print(f"no drift: {out} matches {shown(source)}", file=sys.stderr)
        return
    for line in drift.problems:
        print(f"drift: {line}")
    if drift.catalog_changes is not None:
        changes = drift.catalog_changes
        print(diff.render_text(changes) if changes else "The MCP tool catalog is unchanged (only files differ).")
    curation = (f" --config {config}" if config else "") + "".join(f" --overlay {path}" for path in overlay)
    print(
        f"Regenerate with: typed-mcp generate {shown(source)} --out {out}"
        + (f" --snapshot {snapshot}" if snapshot else "")
        + curation
    )
    raise typer.Exit(1)


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="a spec (file or URL) or a generated package folder")],
    new: Annotated[str, typer.Argument(help="a spec (file or URL) or a generated package folder")],
    output_format: Annotated[str, typer.Option("--format", help="text, markdown or json")] = "text",
    fail_on: Annotated[str, typer.Option(help="exit 1 on: breaking, any or never")] = "never",
) -> None:
    """Classify the changes between two MCP tool catalogs: added/removed/renamed tools, input and output changes."""
    from typed_mcp import compare
    from typed_mcp.catalog import diff

    if output_format not in ("text", "markdown", "json") or fail_on not in ("breaking", "any", "never"):
        _fail(TypedMcpError("--format takes text, markdown or json; --fail-on takes breaking, any or never"))
    try:
        before, after = compare.catalog_of(old), compare.catalog_of(new)
    except TypedMcpError as exc:
        _fail(exc)
        return
    changes = diff.diff_catalogs(before, after)
    render = {"text": diff.render_text, "markdown": diff.render_markdown, "json": diff.render_json}[output_format]
    print(render(changes), end="" if output_format == "json" else "\n")
    if diff.has_breaking(changes) and not compare.major_bumped(before.get("version"), after.get("version")):
        print(
            "warning: breaking changes without a major version change "
            f"({before.get('version')} -> {after.get('version')})",
            file=sys.stderr,
        )
    if (fail_on == "breaking" and diff.has_breaking(changes)) or (fail_on == "any" and changes):
        raise typer.Exit(1)


@app.command()
def bundle(
    package: Annotated[Path, typer.Argument(help="a generated package folder (with typed-mcp.json)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="the .mcpb file to write")],
    constraint: Annotated[
        Path | None,
        typer.Option("--constraint", "-c", help="pip constraints pinning the vendored dependencies (same bytes)"),
    ] = None,
    author: Annotated[str, typer.Option(help="the manifest's author name")] = "typed-mcp",
) -> None:
    """Build an MCPB bundle (.mcpb) of PACKAGE: the package and its dependencies for this platform and Python."""
    from typed_mcp.mcpb import build_bundle

    try:
        built = build_bundle(package, out, constraints=constraint, author=author)
    except TypedMcpError as exc:
        _fail(exc)
        return
    print(f"{built.path}: {built.entries} files, {built.size:,} bytes, sha256 {built.sha256}", file=sys.stderr)


@app.command()
def init(
    source: Annotated[
        str | None, typer.Argument(help="the URL (or file) of the API's OpenAPI document, written into typed-mcp.toml")
    ] = None,
    package_name: Annotated[str | None, typer.Option(help="distribution name (default: from the API title)")] = None,
    directory: Annotated[Path, typer.Option("--dir", help="the repository to set up")] = Path(),
    header: Header = [],  # noqa: B006 (typer reads the default; it is never mutated)
) -> None:
    """Set up a repository: typed-mcp.toml, Makefile targets (generate, check, build, publish), the drift
    workflow and a README section; nothing that exists is replaced. Then: make generate."""
    from typed_mcp.init import init as run_init

    try:
        report = run_init(directory, source, package_name, _headers(header))
    except TypedMcpError as exc:
        _fail(exc)
        return
    for line in report.written:
        print(line, file=sys.stderr)
    for line in report.kept:
        print(f"kept {line}", file=sys.stderr)
    for line in report.notes:
        print(f"note: {line}", file=sys.stderr)
    if header:
        print(
            "the -H headers were used once and written nowhere: `make` sends SPEC_TOKEN as a bearer token",
            file=sys.stderr,
        )
    print("next: make generate" if report.written else "nothing to do: everything was already there", file=sys.stderr)


@app.command()
def version() -> None:
    """Print the generator version."""
    print(f"typed-mcp {__version__}")


def main() -> None:
    app()
