"""Parsing is bounded (issue 24, item 4): a few hundred bytes that stand for a billion nodes (YAML
aliases, `$ref`s copied at each use), nesting a hundred thousand levels deep, a number Python will
not read. Each is one line and exit 1 from `generate`, an overlay, `check` and `init`, within seconds
and a few dozen MB, and every existing file stays as it was. The child's own peak memory and time
are measured (`os.wait4`), and a hang is killed at the deadline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import tree_digest
from typed_mcp.errors import SpecError
from typed_mcp.spec.load import MAX_ALIAS_NODES, MAX_DEPTH, parse

DEADLINE = 120  # seconds before a run counts as a hang (the old code ran for minutes; a refusal takes 3-12 s)
MAX_RSS_MB = 300  # the CLI alone peaks near 50 MB; the alias bomb took over 1 GB in 40 s

SPEC_HEAD = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n"


def laughs(levels: int = 9) -> str:
    """Nine levels of ten aliases: 621 bytes of YAML, a billion nodes once expanded."""
    lines = ["x-a0: &a0 [lol]"]
    lines += [f"x-a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def valid_spec() -> dict:
    ok = {"description": "ok", "content": {"application/json": {"schema": {"type": "string"}}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Small", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {"/x": {"get": {"operationId": "get_x", "responses": {"200": ok}}}},
    }


@dataclass
class Run:
    returncode: int
    stderr: str
    seconds: float
    rss_mb: float


# The child's peak RSS as its own memory map counts it (VmHWM, new at exec): the rusage of a forked
# child also counts the parent's memory at the fork, which a pytest worker that ran big generations has.
_MEASURED = (
    "import atexit, runpy, sys; out = sys.argv.pop(1); "
    "atexit.register(lambda: open(out, 'w').write(open('/proc/self/status').read())); "
    "sys.argv[0] = 'typed_mcp'; runpy.run_module('typed_mcp', run_name='__main__')"
)


def run_bounded(*args: str, cwd: Path) -> Run:
    """The CLI in a child whose own peak RSS and wall time are measured; killed at DEADLINE."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as folder:
        status_file = Path(folder) / "status"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", _MEASURED, str(status_file), *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err
        )
        try:
            proc.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err.seek(0)
        status = status_file.read_text() if status_file.is_file() else ""
        peak = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        rss_mb = int(peak[1]) / 1024 if peak else float("inf")  # killed before it could say: unbounded
        return Run(proc.returncode, err.read().decode(), time.monotonic() - started, rss_mb)


def assert_refused(run: Run, *expected: str) -> None:
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1, (
        f"exit {run.returncode} after {run.seconds:.1f}s (killed at {DEADLINE}s): {run.stderr[-2000:]}"
    )
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr[-2000:]
    for text in expected:
        assert text in lines[0], lines[0]
    assert run.rss_mb < MAX_RSS_MB, f"peak RSS {run.rss_mb:.0f} MB"


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    """An output folder that already holds a package (a file stands for it)."""
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "keep.txt").write_text("the package that was here\n")
    return out


BOMB_LINE = "line 10 column 7"  # x-a6's sequence: the first whose expansion passes the limit
ALIASES = f"aliases expand the document by more than {MAX_ALIAS_NODES} nodes"


def test_an_alias_bomb_spec_is_refused_by_generate_naming_the_line(tmp_path: Path, existing: Path):
    spec = tmp_path / "laughs.yaml"
    spec.write_text(SPEC_HEAD + laughs())
    assert len(spec.read_bytes()) < 700
    before = tree_digest(existing)
    run = run_bounded("generate", str(spec), "--out", str(existing), "--no-snapshot", cwd=tmp_path)
    assert_refused(run, f"laughs.yaml: invalid YAML at {BOMB_LINE}: {ALIASES}")
    assert tree_digest(existing) == before


def test_an_alias_bomb_overlay_is_refused(tmp_path: Path, existing: Path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(valid_spec()))
    overlay = tmp_path / "fix.yaml"
    overlay.write_text("overlay: 1.0.0\ninfo: {title: t, version: '1'}\n" + laughs())
    before = tree_digest(existing)
    run = run_bounded("generate", str(spec), "--out", str(existing), "--overlay", str(overlay), cwd=tmp_path)
    assert_refused(run, "fix.yaml: invalid YAML at line 9 column 7", ALIASES)
    assert tree_digest(existing) == before


def test_an_alias_bomb_is_refused_by_check_and_init(tmp_path: Path, existing: Path):
    spec = tmp_path / "laughs.yaml"
    spec.write_text(SPEC_HEAD + laughs())
    before = tree_digest(existing)
    run = run_bounded("check", str(spec), "--out", str(existing), "--package-name", "pkg", cwd=tmp_path)
    assert_refused(run, BOMB_LINE, ALIASES)
    assert tree_digest(existing) == before
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / spec.name).write_bytes(spec.read_bytes())  # init takes specs inside the repository only
    run = run_bounded("init", spec.name, cwd=repo)  # without a package name, init reads the spec's title
    assert_refused(run, BOMB_LINE, ALIASES)
    assert [path.name for path in repo.iterdir()] == [spec.name]


def test_refs_copied_at_each_use_are_bounded_like_aliases(tmp_path: Path, existing: Path):
    """A ref to something that is not a schema (an extension, a path item) is copied at each use:
    seven files of ten refs to the next are ten million copies."""
    (tmp_path / "a0.json").write_text(json.dumps({"leaf": [1, 2, 3]}))
    for level in range(1, 8):
        refs = {f"k{n}": {"$ref": f"a{level - 1}.json"} for n in range(10)}
        (tmp_path / f"a{level}.json").write_text(json.dumps(refs))
    spec = tmp_path / "openapi.json"
    spec.write_text(json.dumps({**valid_spec(), "x-bomb": {"$ref": "a7.json"}}))
    before = tree_digest(existing)
    run = run_bounded("generate", str(spec), "--out", str(existing), "--no-snapshot", cwd=tmp_path)
    assert_refused(run, "references copied in place", f"more than {MAX_ALIAS_NODES} nodes")
    assert tree_digest(existing) == before


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("deep.json", '{"openapi": "3.0.0", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", f"more than {MAX_DEPTH}"),
        ("digits.json", '{"openapi": "3.0.0", "x": ' + "9" * 100_000 + "}", "an integer of 100000 digits"),
    ],
)
def test_deep_json_and_huge_integers_are_one_line(tmp_path: Path, existing: Path, name: str, text: str, expected: str):
    spec = tmp_path / name
    spec.write_text(text)
    before = tree_digest(existing)
    run = run_bounded("generate", str(spec), "--out", str(existing), "--no-snapshot", cwd=tmp_path)
    assert_refused(run, f"{name}: invalid JSON: ", expected)
    assert tree_digest(existing) == before


# The same rules, parsed in this process (each case in well under a second).
@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        ("yaml", SPEC_HEAD + "x: &a [1, *a]\n", "line 4 column 4: an alias refers to a collection that holds it"),
        ("yaml", SPEC_HEAD + "x: &a {b: [*a]}\n", "an alias refers to a collection that holds it"),
        ("yaml", SPEC_HEAD + "x: " + "[" * 500 + "]" * 500 + "\n", f"nested more than {MAX_DEPTH} levels deep"),
        ("yaml", SPEC_HEAD + "x: " + "9" * 5000 + "\n", "line 4 column 4: an integer of 5000 digits"),
        ("yaml", SPEC_HEAD + "x: -" + "9" * 5000 + "\n", "an integer of 5000 digits"),
        ("yaml", SPEC_HEAD + laughs(6), f"line 10 column 7: {ALIASES}"),
        ("json", '{"x": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}", f"nested more than {MAX_DEPTH}"),
        ("json", '{"x": ' + '{"a": ' * 600 + "1" + "}" * 600 + "}", f"nested more than {MAX_DEPTH}"),
        ("json", '{"x": -' + "1" * 4301 + "}", "an integer of 4301 digits"),
        ("json", '{"x": 1e99999}', "1e99999 is not a JSON number"),
    ],
)
def test_parse_refuses_what_cannot_be_bounded(fmt: str, text: str, expected: str):
    started = time.monotonic()
    with pytest.raises(SpecError) as caught:
        parse(text.encode(), origin="spec", fmt=fmt)
    assert expected in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)
    assert time.monotonic() - started < 60  # a hang, not speed


def test_what_real_specs_do_still_parses():
    """Anchors used a few times, nesting at the limit, long integers and floats within Python's."""
    shared = "x-base: &base {type: string, maxLength: 10}\nx-uses: [" + ", ".join(["*base"] * 1000) + "]\n"
    document = parse((SPEC_HEAD + shared).encode(), origin="spec", fmt="yaml")
    assert document["x-uses"][999] == {"type": "string", "maxLength": 10}
    nested = '{"x": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse(nested.encode(), origin="spec", fmt="json")["x"]
    number = "9" * 4300
    assert parse(f'{{"x": {number}, "y": 0.{"0" * 5000}1}}'.encode(), origin="spec", fmt="json")["x"] == int(number)
    # Six levels of ten aliases (a million nodes) is at the limit, and allowed.
    assert parse((SPEC_HEAD + laughs(5)).encode(), origin="spec", fmt="yaml")["x-a5"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "invalid TOML: nested too deeply"),
        ("x = " + "9" * 5000 + "\n", "invalid TOML: Exceeds the limit (4300 digits)"),
        ("# " + "x" * (1024 * 1024) + "\n", "larger than the 1048576 byte cap of a config"),
    ],
)
def test_a_config_that_cannot_be_read_in_bounds_is_one_line(tmp_path: Path, text: str, expected: str):
    from typed_mcp.config import load_config
    from typed_mcp.errors import ConfigError

    path = tmp_path / "typed-mcp.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {expected}")
    assert "\n" not in str(caught.value)
