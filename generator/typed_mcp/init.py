"""`typed-mcp init`: the setup this repository has, written into a user's repository: the config
file (spec source, package name, output, snapshot), Makefile targets (generate, check, build,
publish), the drift workflow and a README section. Nothing that exists is replaced: a Makefile gets
only the targets it lacks, an existing file is kept, and every skip is reported."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2

from typed_mcp import __version__
from typed_mcp.config import load_config
from typed_mcp.errors import TypedMcpError
from typed_mcp.pipeline import package_names
from typed_mcp.render.package import markdown, templates
from typed_mcp.repository import Use, path_problem
from typed_mcp.spec.load import is_url, load, shown, url_credentials

CONFIG = "typed-mcp.toml"
TARGETS = ("generate", "check", "build", "publish")
WORKFLOW = Path(".github") / "workflows" / "api-drift.yml"
# GNU make reads the first of these that exists.
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
IGNORED = (".venv/", "dist/")
# A rule's targets: names before `:` or `::`, not an assignment (`:=`, `::=`); recipe lines start with a tab.
_RULE = re.compile(r"^([^\t#:=?+!\s][^:=?+!]*?)\s*::?(?![:=])")


@dataclass(frozen=True)
class Write:
    path: Path  # relative to the repository
    text: str
    append: bool  # to the end of an existing file; else a new file
    said: str  # what the report says about it


@dataclass
class Report:
    written: list[str] = field(default_factory=list)  # "wrote ...", "appended ..."
    kept: list[str] = field(default_factory=list)  # what already existed and was left alone
    notes: list[str] = field(default_factory=list)  # what the user must know to run what was written
    writes: list[Write] = field(default_factory=list)

    def write(self, path: Path, text: str, *, existing: str = "", what: str = "") -> None:
        if existing:
            text = ("" if existing.endswith("\n") else "\n") + text
            self.writes.append(Write(path, text, True, f"appended {what or 'a section'} to {path}"))
        else:
            self.writes.append(Write(path, text.lstrip("\n"), False, f"wrote {path}"))


@dataclass(frozen=True)
class Setup:
    source: str  # as written into the config: a URL, or a path relative to the repository
    package: str
    out: str
    snapshot: str


def init(root: Path, source: str | None, package_name: str | None, headers: dict[str, str]) -> Report:
    report = Report()
    setup = _setup(root, source, package_name, headers, report)
    requirement, note = running_requirement()
    if note:
        report.notes.append(note)
    env = templates()
    context = {
        "source": setup.source,
        "source_md": f"`{markdown(shown(setup.source))}`",
        "package": setup.package,
        "out": setup.out,
        "snapshot": setup.snapshot,
        "config": CONFIG,
        "requirement": requirement,
    }
    if not (root / CONFIG).exists():
        report.write(Path(CONFIG), env.get_template("init/typed-mcp.toml.j2").render(context))
    _makefile(root, env, context, report)
    if (root / WORKFLOW).exists():
        report.kept.append(f"{WORKFLOW} (exists)")
    else:
        report.write(WORKFLOW, env.get_template("init/api-drift.yml.j2").render(context))
    _readme(root, env.get_template("init/README-section.md.j2").render(context), report)
    _gitignore(root, report)
    for write in report.writes:  # everything rendered first: a failure leaves the repository as it was
        path = root / write.path
        path.parent.mkdir(parents=True, exist_ok=True)
        # "x": a new file never replaces one that appeared meanwhile
        with path.open("a" if write.append else "x", encoding="utf-8") as handle:
            handle.write(write.text)
        report.written.append(write.said)
    return report


def _setup(root: Path, source: str | None, package_name: str | None, headers: dict[str, str], report: Report) -> Setup:
    """What the files name: from an existing config where it says, else from the command line and the spec."""
    settings = None
    if (root / CONFIG).exists():
        settings = load_config(root / CONFIG).config
        report.kept.append(f"{CONFIG} (exists; its source, package_name, out and snapshot are used where set)")
        source = settings.source or source
        package_name = settings.package_name or package_name
    if source is None:
        raise TypedMcpError("give SOURCE: the URL (or file) of the API's OpenAPI document")
    credentials = url_credentials(source) if is_url(source) else []
    if credentials:
        raise TypedMcpError(
            f"the spec URL holds credentials ({', '.join(credentials)}), and the config is committed: "
            "pass them with -H instead (the written Makefile sends SPEC_TOKEN as a bearer token)"
        )
    if not is_url(source):
        source = os.path.relpath(Path(source).resolve(), root.resolve())
        if not (root / source).is_file():
            raise TypedMcpError(f"{source}: no such spec file")
        if path_problem(root, source):  # the committed config may not name a file outside the repository
            raise TypedMcpError(
                f"{source}: the spec file is outside the repository {root.resolve()}: copy it in, and give that path"
            )
    if package_name is None:  # the default name, from the API's title, as generate would choose it
        spec = load(source if is_url(source) else str(root / source), headers=headers)
        info = spec.document.get("info")
        title = info.get("title") if isinstance(info, dict) else None
        package_name = package_names(None, str(title or "api"))[0]
    package = package_names(package_name, "api")[0]
    suffix = ".yaml" if source.split("?")[0].endswith((".yaml", ".yml")) else ".json"
    out = (settings.out if settings else None) or f"generated/{package}"
    snapshot = (settings.snapshot if settings else None) or f"specs/{package}{suffix}"
    written: tuple[tuple[str, str, Use], ...] = (("out", out, "folder"), ("snapshot", snapshot, "spec"))
    for name, path, use in written:
        problem = path_problem(root, path, use)
        if problem:
            raise TypedMcpError(f"{CONFIG}: {name}: {problem}")
    return Setup(source=source, package=package, out=out, snapshot=snapshot)


# What may go into the Makefile's single-quoted `pip install '...'`: a requirement or a URL, nothing a shell reads.
_PLAIN_REQUIREMENT = re.compile(r"^[A-Za-z0-9._@+:/=#%~ -]+$")


def running_requirement() -> tuple[str, str | None]:
    """The pip requirement that installs the typed-mcp running now (its PEP 610 `direct_url.json`
    says where it came from: absent for an index), and a note when a CI runner could not install it:
    a local folder or file exists only on this machine."""
    fallback = f"typed-mcp=={__version__}"
    try:
        direct = metadata.distribution("typed-mcp").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    if not direct:
        return fallback, None
    info = json.loads(direct)
    url, vcs = str(info.get("url", "")), info.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("commit_id"):
        url = f"{vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"
    if isinstance(info.get("subdirectory"), str):
        url += f"#subdirectory={info['subdirectory']}"
    requirement = f"typed-mcp @ {url}"
    if not _PLAIN_REQUIREMENT.match(requirement):
        return fallback, f"typed-mcp runs from {url!r}, which the Makefile cannot name: set TYPED_MCP_REQUIREMENT"
    if url.startswith("file:"):
        return requirement, (
            f"the Makefile installs typed-mcp from {url.removeprefix('file://')}, where this one runs from (it is not"
            " on a package index): a CI runner has no such path, so set TYPED_MCP_REQUIREMENT there (a version on"
            " your index, a wheel URL, or git+https://...@COMMIT)"
        )
    return requirement, None


def rule_targets(text: str) -> set[str]:
    """The targets a Makefile's rules name (not variables, not recipe lines)."""
    found: set[str] = set()
    for line in text.splitlines():
        match = _RULE.match(line)
        if match:
            found.update(match.group(1).split())
    return found


def _makefile(root: Path, env: jinja2.Environment, context: dict[str, Any], report: Report) -> None:
    path = next((root / name for name in MAKEFILES if (root / name).is_file()), root / "Makefile")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    present = rule_targets(text)
    missing = [target for target in TARGETS if target not in present]
    if present.intersection(TARGETS):
        report.kept.append(f"{path.name}'s own {', '.join(t for t in TARGETS if t in present)} (not replaced)")
    if not missing:
        return
    # The variables and the rule that installs typed-mcp come once, with the first targets written.
    first = "TYPED_MCP_VENV ?=" not in text
    block = env.get_template("init/Makefile.j2").render({**context, "targets": missing, "variables": first})
    report.write(Path(path.name), block, existing=text, what="the targets " + ", ".join(missing))


def _readme(root: Path, section: str, report: Report) -> None:
    path = root / "README.md"
    heading = section.lstrip("\n").splitlines()[0]
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if heading in text.splitlines():
        report.kept.append(f"README.md's section {heading!r}")
        return
    report.write(Path("README.md"), section, existing=text, what=f"the section {heading!r}")


def _gitignore(root: Path, report: Report) -> None:
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    lines = set(text.splitlines())
    missing = [entry for entry in IGNORED if entry not in lines and entry.rstrip("/") not in lines]
    if missing:
        report.write(Path(".gitignore"), "".join(f"{e}\n" for e in missing), existing=text, what=", ".join(missing))
