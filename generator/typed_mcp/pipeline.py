"""The whole run: load -> normalize -> plan -> models -> render -> catalog (and checks) -> write."""

from __future__ import annotations

import contextlib
import gc
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from typed_mcp import __version__, cache, names, runs
from typed_mcp.catalog import reuse
from typed_mcp.catalog.budget import BUDGET, Report, figures, report
from typed_mcp.catalog.pack import Packer, layout_problem
from typed_mcp.catalog.verify import GC_THRESHOLD, CatalogWorkers, VerifyError, check_catalog
from typed_mcp.errors import SpecError, StrictModeError, ToolchainError
from typed_mcp.models.build import build_models
from typed_mcp.options import GenerateOptions
from typed_mcp.plan import hints
from typed_mcp.plan.build import plan as build_plan
from typed_mcp.plan.curation import Curation
from typed_mcp.plan.ir import ApiPlan
from typed_mcp.plan.reading import mapping
from typed_mcp.profile import Profile
from typed_mcp.render.package import MCP_REQUIREMENT, Package, render_package
from typed_mcp.render.registry import SERVER_JSON, server_json
from typed_mcp.render.tidy import tidy
from typed_mcp.runs import Summary
from typed_mcp.spec.load import LoadedSpec, load
from typed_mcp.spec.normalize import Document, normalize
from typed_mcp.spec.overlay import Overlay, Removed, apply_overlays
from typed_mcp.write import MANIFEST, staged, write_file_atomically, write_files

_PACKAGE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


@dataclass
class Result:
    plan: ApiPlan | None  # None when the run cache recognized the output (runs.py): nothing was planned
    summary: Summary
    spec: LoadedSpec
    files: Mapping[str, str | bytes]  # what the package folder holds
    snapshot: Path | None  # where the fetched document was saved
    timings: dict[str, float] = field(default_factory=dict)


def package_names(requested: str | None, title: str, source: str | None = None) -> tuple[str, str]:
    """(distribution name, module name). The default comes from the API title; a title that names no
    API (a framework's default such as `FastAPI`, a placeholder such as `My API`) is refused rather
    than guessed from: the name is published, and `fastapi-mcp` is someone else's project."""
    if requested is not None:
        if not _PACKAGE_NAME.match(requested):
            raise SpecError(f"invalid package name {requested!r}: use letters, digits, '.', '_' and '-'")
        name = requested
    else:
        slug = "-".join(names.title_words(title))[:50].strip("-") or "api"
        name = f"{slug}-mcp"
        if names.generic_title(title):
            raise SpecError(
                f"the title {title.strip()[:60]!r} names no API (a framework's default or a placeholder), so the"
                f" package would be {name}: give --package-name NAME (or package_name in the config)",
                source=source,
                pointer="#/info/title",
            )
    module = names.snake_case(name) or "api_mcp"
    if not module[0].isalpha():
        module = "mcp_" + module
    return name, module


def package_version(api_version: str) -> str:
    """The API's `info.version` as a PEP 440 version (e.g. `2022-11-28` -> `2022.11.28`)."""
    text = api_version.strip().lstrip("vV")
    for candidate in (text, text.replace("-", ".")):
        try:
            return str(Version(candidate))
        except InvalidVersion:
            continue
    numbers = re.findall(r"\d+", text)
    return ".".join(str(int(n)) for n in numbers[:4]) if numbers else "0.0.0"


@contextlib.contextmanager
def _fewer_gc_passes() -> Iterator[None]:
    """The cyclic garbage collector runs less often while generating (see verify.GC_THRESHOLD)."""
    before = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, 50, 1000)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@dataclass(frozen=True)
class Loaded:
    """The spec with the overlays applied, the overlays, the operations they removed, and the run's
    key in the run cache (None: the cache is off)."""

    spec: LoadedSpec
    overlays: list[Overlay]
    removed: list[Removed]
    run: str | None

    def recognizes(self, out: Path, *, verify: bool) -> tuple[Summary, runs.FolderFiles] | None:
        """The record's summary and the folder's files when `out` is what these inputs generate (runs.py)."""
        return runs.recognize(self.run, out, verify=verify) if self.run is not None else None


def load_inputs(options: GenerateOptions) -> Loaded:
    """The spec `options` name, fetched or read once, with the overlays applied (nothing is written)."""
    with cache.enabled(options.cache):
        config = options.config
        spec = load(options.source, headers=dict(options.headers))
        overlay_paths = (config.overlay_paths if config is not None else ()) + tuple(options.overlays)
        spec, overlays, removed = apply_overlays(spec, overlay_paths)
        return Loaded(spec, overlays, removed, runs.key(spec, [(o.path.name, o.sha256) for o in overlays], options))


@_fewer_gc_passes()
def generate(
    options: GenerateOptions, *, step: Callable[[str], None] = lambda _: None, loaded: Loaded | None = None
) -> Result:
    """Generate the package `options` describe into `options.out`: everything or nothing. `loaded`:
    the inputs, when the caller has loaded them already (`load_inputs` of the same options)."""
    with cache.enabled(options.cache):
        return _generate(options, step, loaded)


def _generate(options: GenerateOptions, step: Callable[[str], None], loaded: Loaded | None) -> Result:
    timings: dict[str, float] = {}
    started = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal started
        now = time.perf_counter()
        timings[name] = round(now - started, 3)
        started = now

    config = options.config  # read (and checked) when the options were made: before any fetch
    step("loading the spec")
    inputs = loaded or load_inputs(options)
    spec, overlays, removed, run = inputs.spec, inputs.overlays, inputs.removed, inputs.run
    known = inputs.recognizes(options.out, verify=options.verify)
    lap("load")
    if known is not None:
        summary, folder = known
        step("the package is already what these inputs generate")
        snapshot = snapshot_path(spec, options, summary.package_name)
        if snapshot is not None:
            write_file_atomically(snapshot, spec.raw)
        return Result(plan=None, summary=summary, spec=spec, files=folder, snapshot=snapshot, timings=timings)
    doc = normalize(
        spec,
        allow_remote_refs=options.allow_remote_refs,
        allow_private_refs=options.allow_private_refs,
        ref_root=options.ref_root,
    )
    curation = Curation(config, [(r.operation, r.rule) for r in removed], [(o.path.name, o.sha256) for o in overlays])
    curation.add_schemes(doc)
    info = mapping(doc.data.get("info"))
    name, module = package_names(options.package_name, str(info.get("title") or ""), doc.origin)
    step("planning tools")
    api = build_plan(
        doc,
        package_name=name,
        module=module,
        spec_url=spec.url,
        tool_prefix=options.tool_prefix,
        curation=curation,
        profile=options.chosen_profile,
    )
    if options.strict and api.skipped:
        first = api.skipped[0]
        raise StrictModeError(
            f"{len(api.skipped)} operation(s) would be skipped (--strict); first: {first.key}: {first.reason}"
        )
    if options.strict and api.degraded:
        raise StrictModeError(
            f"{len(api.degraded)} part(s) of the spec would be read in a degraded way (--strict);"
            f" first: {api.degraded[0]}"
        )
    snapshot = snapshot_path(spec, options, api.package_name)
    spec_file = snapshot.name if snapshot else Path(spec.origin).name  # as typed-mcp.json and the README name it
    lap("plan")
    # The workers that will list the tools start as soon as model generation leaves a core idle:
    # their SDK import overlaps the rest of it.
    with CatalogWorkers(len(api.operations)) as workers:
        package, files = _package_files(api, doc, spec, spec_file, options, step, lap, workers.start)
        step("writing")
        # The catalog is listed from the staging folder of the output: its 3,000 files are written once.
        with staged(options.out, files) as staging:
            # The models and all an import of them runs first: the workers import them and derive
            # their schemas while the rest (the tool modules...) is rendered, tidied and checked.
            _tidy_and_check(package, staging, files, set(files), step)
            if not reuse.recorded(api.module):  # else most tools may be reused, and few listed
                workers.prepare(staging / "src", api.module, len(api.operations))
            step(f"rendering {len(api.operations)} tools")
            rest = package.complete()
            files.update(rest)
            write_files(staging, dict(rest))
            lap("render")
            _tidy_and_check(package, staging, files, set(rest), step)
            path = f"src/{api.module}/catalog.json"
            files[path], listed = _catalog(api, package, files, staging / "src", workers, options.verify, step)
            # The manifest is written last, once: it records which tools the schema budget trimmed,
            # known once they are listed.
            summary = Summary.of(api, listed)
            files[MANIFEST] = manifest(api, spec, spec_file, version_of(api, options), summary.catalog.trimmed)
            write_files(staging, {path: files[path], MANIFEST: files[MANIFEST]})
    if snapshot is not None:
        write_file_atomically(snapshot, spec.raw)
    if run is not None:
        runs.record(run, spec, files, summary, verified=options.verify)
    lap("catalog and write")
    return Result(plan=api, summary=summary, spec=spec, files=files, snapshot=snapshot, timings=timings)


def _package_files(
    api: ApiPlan,
    doc: Document,
    spec: LoadedSpec,
    spec_file: str,
    options: GenerateOptions,
    step: Callable[[str], None],
    lap: Callable[[str], None],
    cores_free: Callable[[], None],
) -> tuple[Package, dict[str, str | bytes]]:
    """The models and the part of the package an import of them runs (`render_package`; the rest comes
    from `Package.complete`); their guards check them once they are tidied (`_tidy_and_check`)."""
    step(f"generating models for {len(api.schemas)} schemas")
    models = build_models(doc, api, cores_free=cores_free)
    lap("models")
    step("rendering the package")
    version = version_of(api, options)
    package = render_package(api, models, spec_sha256=spec.sha256, spec_filename=spec_file, package_version=version)
    files: dict[str, str | bytes] = dict(package.files)
    listed = server_json(api, version, api.variables())  # the MCP Registry entry, with a [registry] name
    if listed is not None:
        files[SERVER_JSON] = listed
    return package, files


def _tidy_and_check(
    package: Package,
    staging: Path,
    files: dict[str, str | bytes],
    chosen: set[str],
    step: Callable[[str], None],
) -> None:
    """Tidy the Python files of `files` whose paths are `chosen` (whole folders below the module's
    own: see `tidy`'s targets), written out under `staging`, and check each as it now is with its
    guard, before anything imports it. Once, after the tidying (ruff only parses what it formats, and
    the guard accepts what the import fixes do): the formatter changes nearly every module, so a
    check before it too would be a second full one. Where ruff cannot tidy, the guard says first
    which rendered module it refuses, and why."""
    part = {path: text for path, text in files.items() if path.endswith(".py") and path in chosen}
    if not part:
        return
    rendered = dict(part)
    targets = tuple(sorted({"/".join(path.split("/")[:3]) for path in part}))  # src/<module>/<file or folder>
    step(f"tidying {len(part):,} modules with ruff")
    try:
        tidy(staging, part, targets)
    except ToolchainError:
        package.check(rendered)
        raise
    files.update(part)
    step(f"checking {len(part):,} modules with their guards")
    package.check(part)


def _catalog(
    api: ApiPlan,
    package: Package,
    files: dict[str, str | bytes],
    src: Path,
    workers: CatalogWorkers,
    verify: bool,
    step: Callable[[str], None],
) -> tuple[str, Report]:
    """`catalog.json` for the package whose sources are `files`, written out under `src`; checked;
    and its figures. The tools whose sources are as they were in the package's last cached catalog
    are taken from it (`catalog.reuse`); the others are listed."""
    sources = sorted((path, content) for path, content in files.items() if path.startswith("src/"))
    entry = cache.key("catalog", f"budget {BUDGET}", *(part for path, content in sources for part in (path, content)))
    cached = _cached_catalog(entry, api)
    if cached is not None:
        step("the tool catalog of these exact sources is cached")
        return cached
    names = [op.tool_name for op in api.operations]
    packer = Packer()
    keys: dict[str, str] = {}
    reused = reuse.Reused({}, {})
    if cache.directory() is not None:
        keyed = reuse.Keys(files, package.heads, api.module, package.model_modules, BUDGET)
        for op in api.operations:
            view = package.views.get(op.tool_name)
            keys[op.tool_name] = keyed.of(reuse.ToolSource(op.tool_name, op.func_name, view and [*map(list, view)]))
        reused = reuse.previous(api.module, keys, packer)
    todo = [name for name in names if name not in reused.tools]
    unchanged = f" ({len(reused.tools):,} unchanged since the last catalog)" if reused.tools else ""
    step(f"listing {len(todo)} tools with the MCP SDK{unchanged}")
    listed = workers.tools(
        src,
        api.module,
        todo,
        progress=lambda done, total: step(f"listing tools with the MCP SDK: {done:,} of {total:,}"),
        keep=packer.add_listed,
    )
    found = {**reused.tools, **{tool.name: tool for tool in listed}}
    tools = [found[name] for name in names if name in found]
    every = {**reused.trimmed, **workers.trimmed}
    trimmed = {name: every[name] for name in names if name in every}  # in the order of the tools
    if verify:
        check_catalog({tool.name: tool.has_output for tool in tools}, api)
    packed = packer.text(tools, trimmed=trimmed, budget=BUDGET)
    cache.put(entry, packed)
    if keys:
        reuse.remember(api.module, entry, keys)
    return packed, figures([tool.name for tool in tools], [tool.size for tool in tools], trimmed, BUDGET)


def snapshot_path(spec: LoadedSpec, options: GenerateOptions, package_name: str) -> Path | None:
    """Where the document is saved: the snapshot asked for, else (by default, for a fetched one)
    `specs/<package>.<format>`, so that a second API never overwrites the first."""
    if options.snapshot is not None or not options.default_snapshot or spec.url is None:
        return options.snapshot
    return Path("specs") / f"{package_name}.{spec.format}"


def _cached_catalog(entry: str, api: ApiPlan) -> tuple[str, Report] | None:
    """A cached catalog and its figures, if it has the catalog's layout and lists the plan's tools
    (see check_catalog); else a warning, and None."""
    packed = cache.get(entry)
    if packed is None:
        return None
    try:
        data = json.loads(packed)
        problem = layout_problem(data)
        if problem is not None:
            raise VerifyError(problem)
        check_catalog({tool["name"]: "outputSchema" in tool for tool in data["tools"]}, api)
    except (ValueError, VerifyError) as exc:  # json's errors are ValueErrors
        cache.warn(entry, f"it is not this package's catalog ({exc})")
        return None
    return packed, report(data)


def version_of(api: ApiPlan, options: GenerateOptions) -> str:
    return package_version(options.version or api.api_version)


def manifest(api: ApiPlan, spec: LoadedSpec, spec_name: str, version: str, trimmed: Mapping[str, int]) -> str:
    """What was generated from what: read by the drift check and by people. No timestamps. `trimmed`:
    the tools the schema budget trimmed in the catalog (tool -> depth of references kept)."""
    data = {
        "generator": f"typed-mcp {__version__}",
        "sdk": MCP_REQUIREMENT,  # the MCP SDK minor the package was generated and tested with
        "package": api.package_name,
        "version": version,
        "module": api.module,
        "api": {"title": api.title, "version": api.api_version, "openapi": api.openapi_version},
        "spec": {"sha256": spec.sha256, "file": spec_name},
        "operations": len(api.operations) + len(api.skipped),
        "tools": {op.tool_name: op.key for op in api.operations},
        "skipped": [{"operation": s.key, "reason": s.reason} for s in api.skipped],
        # Each tool's annotations with the reason for each (plan/hints.py; curation's overrides)
        "annotations": {op.tool_name: hints.record(op.hints) for op in api.operations},
        # The tools whose answers may carry date-times without a timezone (the config's naive_datetimes)
        "naive_datetimes": {"accept": [op.tool_name for op in api.operations if op.naive_datetimes]},
        "environment": api.variables(),
    }
    derived = [op.tool_name for op in api.operations if op.title_from_description]
    if derived:  # operations without a summary: their title is their description's first sentence
        data["titles_from_description"] = derived
    confirmed = [op.tool_name for op in api.operations if op.confirm]
    if confirmed:  # the config's [confirm]: the tools whose calls the person confirms before they are sent
        data["confirm"] = confirmed
    budgets = {op.tool_name: op.inline_bytes for op in api.operations if op.inline_bytes is not None}
    if budgets:  # the config's inline_bytes: the tools whose answers hold more or less inline than the default
        data["inline_bytes"] = budgets
    long_running = [op.tool_name for op in api.operations if op.long_running]
    if long_running:  # the config's long_running: a 202 answer's Location is followed (`_runtime/tasks.py`)
        data["long_running"] = long_running
    if api.curation or api.curation_sources:  # only for curated packages: the others stay as they were
        data["curation"] = api.curation
        data["curated_by"] = api.curation_sources
    if api.profile is not Profile.DEFAULT:  # only for other profiles: default packages stay as they were
        data["profile"] = api.profile.value
    if api.listing.registry_name is not None:  # the config's [registry]: server.json is written
        registry = {"name": api.listing.registry_name, "server_json": SERVER_JSON}
        if api.listing.remote_url:
            registry |= {"remote_url": api.listing.remote_url, "remote_auth": api.listing.remote_auth}
        data["registry"] = registry
    if api.warnings or api.degraded:  # inputs left out of a tool (a header never sent), malformed schemas
        data["notes"] = [*api.warnings, *api.degraded]
    data["schema_budget"] = {"bytes": BUDGET, "trimmed": dict(trimmed)}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
