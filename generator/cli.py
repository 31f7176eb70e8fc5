"""The `typed-mcp` command line."""

from __future__ import annotations

import os
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
            raise SpecError("--header must look like 'Name: value' (got a value without ':')")
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
    verify: Annotated[bool, typer.Option(help="check the generated server's tool listing (every tool, every outputSchema) before writing")] = True,
    allow_remote_refs: Annotated[bool, typer.Option(help="fetch http(s) $refs (refused by default)")] = False,
    package_version: Annotated[Optional[str], typer.Option(help="package version (default: info.version as PEP 440)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="print nothing on success")] = False,
    use_cache: Annotated[bool, typer.Option("--cache/--no-cache", help=CACHE_HELP)] = True,
) -> None:
    """Write a complete MCP server project for SOURCE to OUT (replaced only when everything succeeded)."""
    from generator.pipeline import generate as run, package_names

    _cache_setting(use_cache)
    try:
        if snapshot is None and is_url(source) and not no_snapshot:
            snapshot = Path("specs") / (package_names(package_name, "api")[0] if package_name else "openapi")
        with err.status("generating", spinner="dots") if err.is_terminal and not quiet else _Null() as status:

            def step(text: str) -> None:
                if status is not None:
                    status.update(text)

            result = run(
                source, out, package_name=package_name, headers=_headers(header), snapshot=_with_suffix(snapshot, source),
                strict=strict, verify=verify, allow_remote_refs=allow_remote_refs, version=package_version, step=step,
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


CACHE_HELP = "reuse models and tool catalogs computed before from the same inputs (~/.cache/typed-mcp, or TYPED_MCP_CACHE_DIR)"


def _cache_setting(use_cache: bool) -> None:
    if not use_cache:
        from generator import cache

        os.environ[cache.ENV_OFF] = "1"


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
def check(
    source: Annotated[str, typer.Argument(help="the live spec URL, or the snapshot file")],
    out: Annotated[Path, typer.Option("--out", "-o", help="the committed package folder")],
    package_name: Annotated[Optional[str], typer.Option(help="as given to generate")] = None,
    snapshot: Annotated[Optional[Path], typer.Option(help="the committed spec snapshot to compare a fetched spec with")] = None,
    header: Annotated[list[str], typer.Option("--header", "-H", help="'Name: value' sent when fetching a URL")] = [],  # noqa: B006
    package_version: Annotated[Optional[str], typer.Option(help="as given to generate")] = None,
    use_cache: Annotated[bool, typer.Option("--cache/--no-cache", help=CACHE_HELP)] = True,
) -> None:
    """Exit 0 when SOURCE regenerates exactly the committed package (and snapshot); 1 on drift, with a summary."""
    import tempfile

    _cache_setting(use_cache)
    from generator import catalog, diff
    from generator.pipeline import generate as run

    try:
        with tempfile.TemporaryDirectory(prefix="typed-mcp-check-") as temp:
            fresh = Path(temp) / (out.name or "package")
            fetched = Path(temp) / (snapshot.name if snapshot else "spec")
            run(source, fresh, package_name=package_name, headers=_headers(header), snapshot=fetched if snapshot else None,
                verify=False, version=package_version)
            drift = []
            if snapshot is not None and (not snapshot.is_file() or snapshot.read_bytes() != fetched.read_bytes()):
                drift.append(f"the spec differs from the snapshot {snapshot}")
            changed = _tree_changes(out, fresh)
            if changed:
                drift.append(f"{len(changed)} generated file(s) differ: {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}")
            if not drift:
                print(f"no drift: {out} matches {source}", file=sys.stderr)
                return
            for line in drift:
                print(f"drift: {line}")
            if changed and catalog.is_package(out):
                changes = diff.diff_catalogs(catalog.catalog_of_package(out), catalog.catalog_of_package(fresh))
                print(diff.render_text(changes) if changes else "The MCP tool catalog is unchanged (only files differ).")
            print(f"Regenerate with: typed-mcp generate {source} --out {out}" + (f" --snapshot {snapshot}" if snapshot else ""))
    except TypedMcpError as exc:
        _fail(exc)
    raise typer.Exit(1)


def _tree_changes(old: Path, new: Path) -> list[str]:
    def files(root: Path) -> dict[str, bytes]:
        if not root.is_dir():
            return {}
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}

    before, after = files(old), files(new)
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="a spec (file or URL) or a generated package folder")],
    new: Annotated[str, typer.Argument(help="a spec (file or URL) or a generated package folder")],
    output_format: Annotated[str, typer.Option("--format", help="text, markdown or json")] = "text",
    fail_on: Annotated[str, typer.Option(help="exit 1 on: breaking, any or never")] = "never",
) -> None:
    """Classify the changes between two MCP tool catalogs: added/removed/renamed tools, input and output changes."""
    from generator import catalog, diff

    if output_format not in ("text", "markdown", "json") or fail_on not in ("breaking", "any", "never"):
        _fail(TypedMcpError("--format takes text, markdown or json; --fail-on takes breaking, any or never"))
    try:
        before, after = catalog.catalog_of(old), catalog.catalog_of(new)
    except TypedMcpError as exc:
        _fail(exc)
        return
    changes = diff.diff_catalogs(before, after)
    render = {"text": diff.render_text, "markdown": diff.render_markdown, "json": diff.render_json}[output_format]
    print(render(changes), end="" if output_format == "json" else "\n")
    if diff.has_breaking(changes) and not _major_bumped(before.get("version"), after.get("version")):
        print(f"warning: breaking changes without a major version change ({before.get('version')} -> {after.get('version')})", file=sys.stderr)
    if (fail_on == "breaking" and diff.has_breaking(changes)) or (fail_on == "any" and changes):
        raise typer.Exit(1)


def _major_bumped(old: str | None, new: str | None) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(new or "0").major > Version(old or "0").major
    except InvalidVersion:
        return False


@app.command()
def corpus(
    folder: Annotated[Path, typer.Argument(help="a folder of specs (uses its index.tsv when present)")] = Path("../shared/corpus"),
    only: Annotated[list[str], typer.Option(help="only specs whose file name contains this (repeatable)")] = [],  # noqa: B006
    max_bytes: Annotated[Optional[int], typer.Option(help="only specs up to this size (index.tsv's size_bytes)")] = None,
    fidelity_sample: Annotated[int, typer.Option(help="operations checked for fidelity per spec (0: none)")] = 200,
    per_op: Annotated[int, typer.Option(help="generated instances per checked operation")] = 3,
    calls: Annotated[bool, typer.Option(help="call every tool through the strict TypeScript client against Prism (needs `make test`'s tests/node)")] = False,
    report: Annotated[Optional[Path], typer.Option(help="also write REPORT.md and REPORT.json")] = None,
    work: Annotated[Optional[Path], typer.Option(help="keep the generated packages here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON on stdout")] = False,
) -> None:
    """Generate, import, list and fidelity-check every spec of FOLDER; one row per spec."""
    import tempfile

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from generator import corpus as runner

    if not folder.is_dir():
        _fail(TypedMcpError(f"{folder}: no such folder"))
    specs = [
        (path, meta) for path, meta in runner.discover(folder)
        if (not only or any(o in path.name or o in meta.get("file", "") for o in only))
        and (max_bytes is None or int(meta.get("size_bytes", "0").split()[0] or 0) <= max_bytes or not meta.get("size_bytes"))
    ]
    rows: list[runner.Row] = []
    with tempfile.TemporaryDirectory(prefix="typed-mcp-corpus-") as temp:
        base = work or Path(temp)
        base.mkdir(parents=True, exist_ok=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=err, disable=not err.is_terminal) as progress:
            task = progress.add_task("corpus", total=len(specs))
            for path, meta in specs:
                label = meta.get("file") or path.name
                step = lambda phase, label=label: progress.update(task, description=f"{label}: {phase}")  # noqa: E731
                rows.append(runner.run_spec(path, meta, base, fidelity_sample=fidelity_sample, per_op=per_op, calls=calls, step=step))
                progress.advance(task)
                if not err.is_terminal:
                    print(f"{label}: {'error' if rows[-1].error else 'done'} in {rows[-1].generate_s:.1f}s", file=sys.stderr)
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.with_suffix(".md").write_text(runner.markdown(rows))
        report.with_suffix(".json").write_text(runner.to_json(rows))
    if as_json:
        print(runner.to_json(rows), end="")
    else:
        table = Table(title=f"typed-mcp corpus: {folder}")
        for column in ("spec", "version", "ops", "tools", "outputSchema", "skipped", "gen s", "gen MB", "import s", "fidelity", "strict vs Prism"):
            table.add_column(column, justify="left" if column in ("spec", "version", "fidelity", "strict vs Prism") else "right")
        for r in rows:
            expected = f" / {r.expected_output}" if r.expected_output is not None else ""
            table.add_row(r.spec, r.version, str(r.operations), str(r.tools), f"{r.with_output}{expected}", str(r.skipped),
                          f"{r.generate_s:.1f}", f"{r.generate_mb:.0f}", f"{r.import_s:.2f}",
                          f"[red]{r.error}[/]" if r.error else runner.fidelity_cell(r.fidelity), runner.strict_cell(r.strict))
        Console().print(table)
    failed = [r for r in rows if r.error or (r.fidelity is not None and not r.fidelity.get("passed")) or runner.strict_failed(r.strict)]
    if failed:
        raise typer.Exit(1)


@app.command()
def version() -> None:
    """Print the generator version."""
    print(f"typed-mcp {__version__}")


def main() -> None:
    app()
