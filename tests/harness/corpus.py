"""`make corpus` (`python -m harness.corpus`): run the whole product over a folder of real specs and report per spec.

Each spec is generated, imported and listed, and checked for fidelity, each in its own process,
so times and peak memory are the spec's own (taken from `os.wait4`).
"""

from __future__ import annotations

import csv
import functools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness import environment, ref_root_args, strict_clients, strict_run
from typed_mcp import pointer
from typed_mcp.children import result_line


@dataclass
class Row:
    spec: str
    version: str = ""
    operations: int = 0
    tools: int = 0
    with_output: int = 0
    expected_output: int | None = None  # from index.tsv: operations with a 2xx JSON schema
    skipped: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    generate_s: float = 0.0
    generate_mb: float = 0.0
    import_s: float = 0.0
    list_s: float = 0.0
    payload_bytes: int = 0
    schema_problems: list[str] = field(default_factory=list)  # first few published schemas that are not sound
    catalog_matches_sdk: bool | None = None  # the precomputed tools/list equals the SDK's own registration
    fidelity: dict[str, Any] | None = None
    strict: dict[str, Any] | None = (
        None  # the strict TypeScript client against Prism (strict_run.strict_run_against_prism)
    )
    error: str | None = None


def discover(folder: Path) -> list[tuple[Path, dict[str, str]]]:
    """The specs of a folder: the `file` column of its index.tsv when present, else every JSON/YAML file."""
    index = folder / "index.tsv"
    if index.is_file():
        with open(index, encoding="utf-8") as handle:
            return [(folder / row["file"], row) for row in csv.DictReader(handle, delimiter="\t")]
    return [(p, {}) for p in sorted(folder.iterdir()) if p.suffix in (".json", ".yaml", ".yml")]


def run_timed(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 1800
) -> tuple[int, str, str, float, float]:
    """Run a child (environment: this one's plus `env`); returns (exit code, stdout, stderr,
    seconds, peak RSS in MB) of that child and the processes it waited for.

    The peak comes from GNU time when it is installed, not from the child's own `ru_maxrss`: Python
    may vfork, and the kernel then charges the (growing) parent's size to the child at exec."""
    started = time.perf_counter()
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        timed = ["/usr/bin/time", "-o", peak.name, "-f", "%M", *args] if Path("/usr/bin/time").exists() else args
        # Its own process group, so that a timeout also ends the processes it started (GNU time's child,
        # model and catalog workers), not only GNU time.
        proc = subprocess.Popen(
            timed, stdout=out, stderr=err, env={**os.environ, **(env or {})}, start_new_session=True
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        text = peak.read().strip().splitlines()
        peak_mb = int(text[-1]) / 1024 if text and text[-1].isdigit() else 0.0
        return proc.returncode, out.read(), err.read(), seconds, peak_mb


def run_spec(
    spec: Path,
    meta: dict[str, str],
    work: Path,
    *,
    fidelity_sample: int,
    per_op: int,
    calls: bool = False,
    passes: tuple[strict_clients.Pass, ...] = (),
    step=lambda _: None,
) -> Row:
    row = Row(spec=meta.get("file") or spec.name, version=meta.get("version", ""))
    if meta.get("ops_2xx_json_schema", "").isdigit():
        row.expected_output = int(meta["ops_2xx_json_schema"])
    name = "c-" + "".join(c if c.isalnum() else "-" for c in row.spec.split("/")[0].rsplit(".", 1)[0].lower())[
        :40
    ].strip("-")
    out = work / name
    step("generate")
    code, _, err, row.generate_s, row.generate_mb = run_timed(
        [
            sys.executable,
            "-m",
            "typed_mcp",
            "generate",
            str(spec),
            "--out",
            str(out),
            "--package-name",
            name,
            "--no-verify",
            "--no-snapshot",
            "-q",
            *ref_root_args(spec),
            "--no-cache",
        ]
    )
    if code != 0:
        row.error = (err.strip().splitlines() or [f"exit {code}"])[-1][:300]
        return row
    manifest = json.loads((out / "typed-mcp.json").read_text())
    row.version = row.version or manifest["api"]["openapi"]
    row.operations = manifest["operations"]
    row.skipped = len(manifest["skipped"])
    row.skip_reasons = dict(Counter(_reason_kind(s["reason"]) for s in manifest["skipped"]))
    step("import and list")
    code, stdout, err, _, _ = run_timed(
        [sys.executable, "-m", "harness.corpus_child", "list", manifest["module"]], env=environment(out / "src")
    )
    if code != 0:
        row.error = "import: " + (err.strip().splitlines() or [f"exit {code}"])[-1][:300]
        return row
    listed = result_line(stdout)
    row.tools, row.with_output, row.payload_bytes = listed["tools"], listed["with_output"], listed["payload_bytes"]
    row.import_s, row.list_s = listed["import_s"], listed["list_s"]
    row.schema_problems = listed["schema_problems"][:10]
    row.catalog_matches_sdk = listed["catalog_matches_sdk"]
    if calls:
        step("strict client calls against Prism")
        row.strict = _strict_calls(spec, out, manifest["module"], passes)
    if fidelity_sample > 0:
        step("fidelity")
        code, stdout, err, _, _ = run_timed(
            [
                sys.executable,
                "-m",
                "harness.fidelity",
                str(out),
                str(spec),
                "--sample",
                str(fidelity_sample),
                "--per-op",
                str(per_op),
            ],
            env=environment(out / "src"),
        )
        if code == 0:
            row.fidelity = result_line(stdout)
        else:
            row.fidelity = {"error": (err.strip().splitlines() or [f"exit {code}"])[-1][:300], "passed": False}
    return row


def _strict_calls(spec: Path, out: Path, module: str, passes: tuple[strict_clients.Pass, ...]) -> dict[str, Any]:
    """Every tool called through the strict TypeScript client against Prism (and through each other
    strict client pass of `passes`); counts and first examples."""
    code, stdout, err, _, _ = run_timed(
        [sys.executable, "-m", "harness.corpus_child", "schemes", module], env=environment(out / "src")
    )
    credentials = {var: "prism-credential" for var in (result_line(stdout) if code == 0 else [])}
    try:
        run = strict_run.strict_run_against_prism(spec, out / "src", module, credentials, passes=passes)
    except Exception as exc:  # a run that could not happen is reported in the row, not raised
        return {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"}
    summary: dict[str, Any] = {"tools": run["tools"], "ok": run["ok"], "schemas_compiled": run["schemas_compiled"]}
    for key in (
        "schema_failures",
        "protocol_errors",
        "raised",
        "prism_cannot_answer",
        "off_spec",
        "email_format",
        "transport_failures",
        "beyond_budget",
        "other_errors",
        "model_stricter",
        "request_violations",
        "prism_form_arrays",
        "spec_one_of_overlap",
        "prism_read_only",
        "spec_unsatisfiable",
        "past_budget_requests",
        "invalid_for_prism",
        "prism_warnings",
        "python_refused",
        "python_disagrees",
        *STRICT_PASS_KEYS,
    ):
        summary[key] = len(run[key])
        if run[key]:
            summary[f"{key}_examples"] = [str(x)[:300] for x in run[key][:3]]
    summary["off_spec_why"] = run["off_spec_examples_why"]
    summary["strict_passes"] = run["strict_passes"]
    # The most frequent request violations, by message (what to look at first).
    summary["request_violations_top"] = Counter(v["message"][:160] for v in run["request_violations"]).most_common(8)
    return summary


# What the other strict client passes (strict_clients) refused or saw otherwise: failures, like the reference's.
STRICT_PASS_KEYS = ("strict_refused", "strict_schema_failures", "strict_listed_differs", "strict_disagrees")


def strict_cell(strict: dict[str, Any] | None) -> str:
    if strict is None:
        return "-"
    if "error" in strict:
        return "error"
    bad = sum(
        strict.get(k, 0)
        for k in (
            "protocol_errors",
            "raised",
            "request_violations",
            "schema_failures",
            "python_refused",
            "python_disagrees",
            "model_stricter",
            *STRICT_PASS_KEYS,
        )
    )
    text = f"{strict['ok']}/{strict['tools']} ok, {bad} bad"
    if strict.get("strict_passes"):
        text += f" ({1 + len(strict['strict_passes'])} strict client passes)"
    explained = [
        f"{strict[k]} {label}"
        for k, label in (
            ("prism_cannot_answer", "no Prism answer"),
            ("off_spec", "answers the spec itself refuses"),
            ("email_format", "email refusals"),
            ("transport_failures", "unusable answers"),
            ("beyond_budget", "arguments past the schema budget"),
            ("other_errors", "other errors"),
            ("prism_form_arrays", "form fields Prism misreads"),
            ("spec_one_of_overlap", "bodies valid for several oneOf branches"),
            ("prism_read_only", "readOnly properties Prism requires"),
            ("spec_unsatisfiable", "spec contradictions no request avoids"),
            ("past_budget_requests", "request parts past the schema budget"),
            ("invalid_for_prism", "refused by Prism for those"),
        )
        if strict.get(k)
    ]
    return text + (f" ({', '.join(explained)})" if explained else "")


def strict_failed(strict: dict[str, Any] | None) -> bool:
    """A strict run failed when it could not run, a client refused a result or a schema, Prism saw an
    invalid request, or a tool erred for a reason nobody explained."""
    if strict is None:
        return False
    return "error" in strict or any(
        strict.get(k)
        for k in (
            "protocol_errors",
            "raised",
            "request_violations",
            "schema_failures",
            "other_errors",
            "model_stricter",
            "python_refused",
            "python_disagrees",
            *STRICT_PASS_KEYS,
        )
    )


def schema_problems(schema: dict[str, Any], what: str) -> list[str]:
    """What makes a published schema unusable: not an object root, not valid JSON Schema 2020-12,
    a `$ref` that resolves to nothing, `additionalProperties: false` (outputs must stay open)."""
    problems = []
    if schema.get("type") != "object":
        problems.append(f"{what} root type is {schema.get('type')!r}, not 'object'")
    # Structure against the 2020-12 metaschema; `pattern`s separately, as ECMA-262 regexes (which is what
    # JSON Schema means, and what AJV compiles), not with Python's `re` syntax.
    for message in _metaschema_errors(schema)[:1]:
        problems.append(f"{what} is not valid JSON Schema 2020-12: {message[:120]}")
    for pattern in _patterns(schema):
        try:
            re.compile(re.sub(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", pattern))
        except re.error as exc:
            problems.append(f"{what} has an invalid pattern {pattern[:60]!r}: {exc}")
    for ref in _refs(schema):
        if not ref.startswith("#/") or _pointer_missing(schema, ref):
            problems.append(f"{what} has a dangling $ref {ref!r}")
    if what == "outputSchema" and '"additionalProperties": false' in json.dumps(schema):
        problems.append("outputSchema closes an object with additionalProperties: false")
    return problems


def _metaschema_errors(schema: dict[str, Any]) -> list[str]:
    """The metaschema's complaints about `schema`. The metaschema checks each `$defs` entry as a schema
    of its own, and the tools of one API share most of theirs: each distinct entry is checked once."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return _metaschema_check(json.dumps(schema, sort_keys=True))
    parts = [{**schema, "$defs": {}}, *defs.values()]
    return [m for part in parts for m in _metaschema_check(json.dumps(part, sort_keys=True))]


@functools.cache
def _metaschema_check(text: str) -> list[str]:
    import jsonschema

    meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    return [error.message for error in meta.iter_errors(json.loads(text))]


def _patterns(node: Any) -> list[str]:
    if isinstance(node, list):
        return [p for item in node for p in _patterns(item)]
    if not isinstance(node, dict):
        return []
    found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    for key, value in node.items():
        if key not in ("enum", "const", "default", "examples"):
            found += _patterns(value)
    return found


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def _pointer_missing(schema: dict[str, Any], ref: str) -> bool:
    return pointer.get(schema, ref, None) is None


def _reason_kind(reason: str) -> str:
    return reason.split(":")[0][:60]


def fidelity_cell(fidelity: dict[str, Any] | None) -> str:
    if fidelity is None:
        return "-"
    if "error" in fidelity:
        return "error"
    text = f"{fidelity['roundtrip_ok']}/{fidelity['instances']} ok"
    if fidelity.get("not_generatable"):
        text += f", {fidelity['not_generatable']} ops ungeneratable"
    return text


def markdown(rows: list[Row]) -> str:
    lines = [
        "| spec | version | operations | tools | outputSchema | skipped | generate s | generate MB | import s | tools/list KB | fidelity | strict client vs Prism |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        if r.error:
            lines.append(
                f"| {r.spec} | {r.version} | | | | | {r.generate_s:.1f} | {r.generate_mb:.0f} | | | error: {r.error} | |"
            )
            continue
        expected = f" (of {r.expected_output})" if r.expected_output is not None else ""
        lines.append(
            f"| {r.spec} | {r.version} | {r.operations} | {r.tools} | {r.with_output}{expected} | {r.skipped} | "
            f"{r.generate_s:.1f} | {r.generate_mb:.0f} | {r.import_s:.2f} | {r.payload_bytes / 1024:.0f} | {fidelity_cell(r.fidelity)} | "
            f"{strict_cell(r.strict)} |"
        )
    return "\n".join(lines) + "\n"


def to_json(rows: list[Row]) -> str:
    return json.dumps([asdict(r) for r in rows], indent=2) + "\n"


# --- the command: `make corpus`, or `python -m harness.corpus` with tests/ on PYTHONPATH -------------

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
err = Console(stderr=True, highlight=False)


@app.command()
def corpus(
    folder: Annotated[Path, typer.Argument(help="a folder of specs (uses its index.tsv when present)")] = Path(
        "../shared/corpus"
    ),
    only: Annotated[list[str], typer.Option(help="only specs whose file name contains this (repeatable)")] = [],  # noqa: B006
    max_bytes: Annotated[int | None, typer.Option(help="only specs up to this size (index.tsv's size_bytes)")] = None,
    fidelity_sample: Annotated[int, typer.Option(help="operations checked for fidelity per spec (0: none)")] = 200,
    per_op: Annotated[int, typer.Option(help="generated instances per checked operation")] = 3,
    calls: Annotated[
        bool,
        typer.Option(
            help="call every tool through the strict TypeScript client against Prism (needs `make test`'s tests/node)"
        ),
    ] = False,
    strict_clients_: Annotated[
        str,
        typer.Option(
            "--strict-clients",
            help="with --calls: the strict client passes beside the reference (ts1-stdio), comma-separated "
            "(ts1-http, ts2-stdio, ts2-http, ts2-2026-07-28-stdio, ts2-2026-07-28-http), `all` or `none`",
        ),
    ] = "all",
    report: Annotated[Path | None, typer.Option(help="also write REPORT.md and REPORT.json")] = None,
    work: Annotated[Path | None, typer.Option(help="keep the generated packages here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON on stdout")] = False,
) -> None:
    """Generate, import, list and fidelity-check every spec of FOLDER; one row per spec."""
    if not folder.is_dir():
        err.print(f"{folder}: no such folder")
        raise typer.Exit(2)
    try:
        passes = () if strict_clients_ == "none" else strict_clients.parse_passes(strict_clients_)
    except ValueError as exc:
        err.print(f"--strict-clients: {exc}")
        raise typer.Exit(2) from None
    specs = [
        (path, meta)
        for path, meta in discover(folder)
        if (not only or any(o in path.name or o in meta.get("file", "") for o in only))
        and (
            max_bytes is None
            or int(meta.get("size_bytes", "0").split()[0] or 0) <= max_bytes
            or not meta.get("size_bytes")
        )
    ]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="typed-mcp-corpus-") as temp:
        base = work or Path(temp)
        base.mkdir(parents=True, exist_ok=True)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        ) as progress:
            task = progress.add_task("corpus", total=len(specs))
            for path, meta in specs:
                label = meta.get("file") or path.name
                step = lambda phase, label=label: progress.update(task, description=f"{label}: {phase}")  # noqa: E731
                rows.append(
                    run_spec(
                        path,
                        meta,
                        base,
                        fidelity_sample=fidelity_sample,
                        per_op=per_op,
                        calls=calls,
                        passes=passes,
                        step=step,
                    )
                )
                progress.advance(task)
                if not err.is_terminal:
                    print(
                        f"{label}: {'error' if rows[-1].error else 'done'} in {rows[-1].generate_s:.1f}s",
                        file=sys.stderr,
                    )
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.with_suffix(".md").write_text(markdown(rows))
        report.with_suffix(".json").write_text(to_json(rows))
    if as_json:
        print(to_json(rows), end="")
    else:
        table = Table(title=f"typed-mcp corpus: {folder}")
        for column in (
            "spec",
            "version",
            "ops",
            "tools",
            "outputSchema",
            "skipped",
            "gen s",
            "gen MB",
            "import s",
            "fidelity",
            "strict vs Prism",
        ):
            table.add_column(
                column, justify="left" if column in ("spec", "version", "fidelity", "strict vs Prism") else "right"
            )
        for r in rows:
            expected = f" / {r.expected_output}" if r.expected_output is not None else ""
            table.add_row(
                r.spec,
                r.version,
                str(r.operations),
                str(r.tools),
                f"{r.with_output}{expected}",
                str(r.skipped),
                f"{r.generate_s:.1f}",
                f"{r.generate_mb:.0f}",
                f"{r.import_s:.2f}",
                f"[red]{r.error}[/]" if r.error else fidelity_cell(r.fidelity),
                strict_cell(r.strict),
            )
        Console().print(table)
    failed = [
        r
        for r in rows
        if r.error or (r.fidelity is not None and not r.fidelity.get("passed")) or strict_failed(r.strict)
    ]
    if failed:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
