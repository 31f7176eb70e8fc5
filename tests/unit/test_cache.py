"""The generation cache: a regeneration of unchanged inputs reuses models and the tool catalog,
gives the same bytes as a fresh run, and any change of input is a miss. An entry is used only while
it matches the digest recorded when it was stored and passes the checks fresh output passes (issue
24, item 2): else a warning, and the same output as a run without the cache."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from support import DEMO_CONFIG, REPO, run_cli, tree_digest

# Each test runs `typed-mcp generate` (the CLI, a process of its own).
pytestmark = pytest.mark.slow

WEATHER = REPO / "specs" / "weather-api.json"


def gen(spec: Path, out: Path, cache_dir: Path, *extra: str):
    proc = run_cli(
        "generate",
        str(spec),
        "--out",
        str(out),
        "--package-name",
        "weather-mcp",
        "--no-snapshot",
        "--config",
        str(DEMO_CONFIG),
        *extra,
        env={"TYPED_MCP_NO_CACHE": "", "TYPED_MCP_CACHE_DIR": str(cache_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def entries(cache_dir: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"models": [], "catalog": [], "run": [], "catalog keys": []}
    for path in sorted(cache_dir.iterdir()):
        if path.is_file():
            found[path.name.rsplit("-", 1)[0]].append(path.name)
    return found


def plant(cache_dir: Path, entry: str, text: str, *, digest: bool) -> None:
    """Replace a cache entry's content; with `digest`, record the matching digest too (as someone
    who can write the whole cache folder could)."""
    (cache_dir / entry).write_text(text)
    if digest:
        sha = hashlib.sha256(entry.encode() + b"\0" + text.encode()).hexdigest()
        (cache_dir / "digests").mkdir(exist_ok=True)
        (cache_dir / "digests" / entry).write_text(sha + "\n")


def test_unchanged_inputs_hit_changed_inputs_miss(tmp_path: Path):
    cache_dir = tmp_path / "cache"
    gen(WEATHER, tmp_path / "fresh", cache_dir)
    first = entries(cache_dir)
    assert len(first["models"]) == 1 and len(first["catalog"]) == 1
    gen(WEATHER, tmp_path / "again", cache_dir)
    assert entries(cache_dir) == first  # nothing new: both steps were found
    assert tree_digest(tmp_path / "again") == tree_digest(tmp_path / "fresh")
    assert tree_digest(tmp_path / "fresh") == tree_digest(REPO / "generated" / "weather-mcp")  # = a run without cache

    # A hit really is used: an altered entry, with its digest, that passes the checks shows up in
    # the output (what someone who can write the cache folder can still do: see docs/security.md).
    catalog_entry = cache_dir / first["catalog"][0]
    packed = json.loads(catalog_entry.read_text())
    packed["tools"][0]["description"] = "from the cache"
    plant(cache_dir, catalog_entry.name, json.dumps(packed), digest=True)
    gen(WEATHER, tmp_path / "tampered", cache_dir)
    assert "from the cache" in (tmp_path / "tampered" / "src" / "weather_mcp" / "catalog.json").read_text()
    gen(WEATHER, tmp_path / "uncached", cache_dir, "--no-cache")
    assert tree_digest(tmp_path / "uncached") == tree_digest(tmp_path / "fresh")

    # A changed description changes the models' input and the rendered tools: two new entries.
    spec = json.loads(WEATHER.read_text())
    spec["components"]["schemas"]["WeatherData"]["description"] = "Changed."
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(spec))
    gen(changed, tmp_path / "changed", cache_dir)
    after = entries(cache_dir)
    assert len(after["models"]) == 2 and len(after["catalog"]) == 2
    assert "Changed." in (tmp_path / "changed" / "src" / "weather_mcp" / "catalog.json").read_text()


def test_an_unwritable_cache_is_no_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    gen(WEATHER, tmp_path / "out", blocker / "cache")
    assert tree_digest(tmp_path / "out") == tree_digest(REPO / "generated" / "weather-mcp")


# Code that writes a marker file when the model class is built: a field default of WeatherData,
# which a tool returns (so the catalog's listing imports it).
PLANTED = "    planted: str = __import__('pathlib').Path({marker!r}).write_text('x') and 'x'\n"


@pytest.mark.parametrize("digest", [False, True], ids=["edited entry", "edited entry and digest"])
def test_an_edited_models_entry_is_not_used(tmp_path: Path, digest: bool):
    cache_dir = tmp_path / "cache"
    gen(WEATHER, tmp_path / "fresh", cache_dir)
    (entry,) = entries(cache_dir)["models"]
    marker = tmp_path / "ran"
    text = (cache_dir / entry).read_text()
    assert "class WeatherData(OpenModel):\n" in text
    edited = text.replace(
        "class WeatherData(OpenModel):\n", "class WeatherData(OpenModel):\n" + PLANTED.format(marker=str(marker))
    )
    plant(cache_dir, entry, edited, digest=digest)
    proc = gen(WEATHER, tmp_path / "out", cache_dir)
    assert not marker.exists()  # the planted code never ran
    reason = "fail the guard" if digest else "does not match the digest"
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: cache entry")]
    assert len(warnings) == 1 and reason in warnings[0] and entry[:60] in warnings[0], proc.stderr
    assert tree_digest(tmp_path / "out") == tree_digest(REPO / "generated" / "weather-mcp")  # = a run without cache
    assert (cache_dir / entry).read_text() == text  # and the entry is the fresh run's again
    gen(WEATHER, tmp_path / "again", cache_dir)
    assert not marker.exists()


def test_a_catalog_entry_that_is_not_this_packages_catalog_is_not_used(tmp_path: Path):
    cache_dir = tmp_path / "cache"
    gen(WEATHER, tmp_path / "fresh", cache_dir)
    (entry,) = entries(cache_dir)["catalog"]
    packed = json.loads((cache_dir / entry).read_text())
    for number, broken in enumerate(
        (
            {**packed, "tools": packed["tools"][1:]},  # a tool less: check_catalog
            {**packed, "sizes": [-1] * len(packed["sizes"])},  # not the catalog's layout
            {**packed, "format": "other"},
        )
    ):
        plant(cache_dir, entry, json.dumps(broken), digest=True)
        out = tmp_path / f"out{number}"  # a new folder each time: the run cache recognizes an old one
        proc = gen(WEATHER, out, cache_dir)
        assert "warning: cache entry catalog-" in proc.stderr and "not this package's catalog" in proc.stderr
        assert tree_digest(out) == tree_digest(REPO / "generated" / "weather-mcp")


def test_the_drift_workflow_restores_only_its_exact_cache_key(tmp_path: Path):
    proc = run_cli("init", "https://api.example.com/openapi.json", "--package-name", "example-mcp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    workflow = yaml.safe_load((tmp_path / ".github/workflows/api-drift.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    (cache,) = [step for step in steps if str(step.get("uses", "")).startswith("actions/cache")]
    assert cache["with"]["key"].startswith("typed-mcp-") and "restore-keys" not in cache["with"]


# --- the run cache (runs.py): a folder that already holds what the inputs generate is left as it is ---

UNCHANGED = "(unchanged: the folder already held what these inputs generate)"


def files_on_disk(folder: Path) -> dict[str, tuple[int, int]]:
    """Each entry's inode and modification time, the folder's own included: any write changes them."""
    return {str(p.relative_to(folder)): (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in [folder, *folder.rglob("*")]}


def summary_lines(stderr: str) -> list[str]:
    """What the command says after a run, without the time it took and the unchanged remark."""
    return [line.split(" in ")[0] if " tools (" in line else line for line in stderr.splitlines()]


def test_a_folder_that_already_holds_the_output_is_left_as_it_is(tmp_path: Path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    first = gen(WEATHER, out, cache_dir)
    assert UNCHANGED not in first.stderr
    (record,) = entries(cache_dir)["run"]
    before = files_on_disk(out)
    again = gen(WEATHER, out, cache_dir)
    assert UNCHANGED in again.stderr
    assert files_on_disk(out) == before  # nothing was written, not even swapped in again
    assert summary_lines(again.stderr) == summary_lines(first.stderr)  # the summary and the budget, from the record
    assert entries(cache_dir)["run"] == [record]

    # Any difference in the folder is a full run, which writes the package as a fresh run would.
    catalog = out / "src" / "weather_mcp" / "catalog.json"
    changes = {
        "an edited file": lambda: catalog.write_text(catalog.read_text().replace("weather", "whether", 1)),
        "a file more, a file less": lambda: (
            (out / "src" / "weather_mcp" / "extra.py").write_text("import os\n"),
            (out / "README.md").unlink(),
        ),
        "a link for a file": lambda: (
            (tmp_path / "copy.json").write_bytes(catalog.read_bytes()),
            catalog.unlink(),
            catalog.symlink_to(tmp_path / "copy.json"),
        ),
    }
    for change in changes.values():
        change()
        proc = gen(WEATHER, out, cache_dir)
        assert UNCHANGED not in proc.stderr, proc.stderr
        assert tree_digest(out) == tree_digest(REPO / "generated" / "weather-mcp")
        assert not any(path.is_symlink() for path in out.rglob("*"))


def test_other_inputs_are_never_recognized(tmp_path: Path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    gen(WEATHER, out, cache_dir, "--no-verify")  # a run that did not list its tools to check them...
    proc = gen(WEATHER, out, cache_dir)  # ...is no record for a run that does
    assert UNCHANGED not in proc.stderr
    assert UNCHANGED in gen(WEATHER, out, cache_dir, "--no-verify").stderr  # the other way is fine

    prefixed = gen(WEATHER, out, cache_dir, "--tool-prefix", "wx_")  # an option
    assert UNCHANGED not in prefixed.stderr and "wx_get_weather" in (out / "typed-mcp.json").read_text()
    config = tmp_path / "weather-mcp.toml"  # the config's content, though the output is the same
    config.write_text(DEMO_CONFIG.read_text() + "\n# a comment\n")
    assert UNCHANGED not in gen(WEATHER, out, cache_dir, "--config", str(config)).stderr
    manifest = (out / "typed-mcp.json").read_text()
    assert "wx_get_weather" not in manifest and hashlib.sha256(config.read_bytes()).hexdigest() in manifest


def test_a_spec_whose_refs_reach_another_file_is_never_recognized(tmp_path: Path):
    """The other file's content is not in the key: were the run recognized, an edit there would be lost."""
    spec = json.loads(WEATHER.read_text())
    schemas = spec["components"]["schemas"]
    name = next(key for key, schema in schemas.items() if "$ref" not in json.dumps(schema) and "description" in schema)
    side = tmp_path / "side.json"
    side.write_text(json.dumps({name: schemas[name]}))
    schemas[name] = {"$ref": f"side.json#/{name}"}
    (tmp_path / "api.json").write_text(json.dumps(spec))
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    gen(tmp_path / "api.json", out, cache_dir)
    side.write_text(json.dumps({name: {**json.loads(side.read_text())[name], "description": "Edited beside."}}))
    proc = gen(tmp_path / "api.json", out, cache_dir)
    assert UNCHANGED not in proc.stderr
    assert "Edited beside." in (out / "src" / "weather_mcp" / "catalog.json").read_text() or any(
        "Edited beside." in path.read_text() for path in (out / "src" / "weather_mcp" / "models").glob("*.py")
    )


def test_the_drift_check_recognizes_the_committed_package(tmp_path: Path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    gen(WEATHER, out, cache_dir)
    # A models entry that no run can use: a check that regenerated would say so in a warning.
    (models,) = entries(cache_dir)["models"]
    plant(cache_dir, models, "not models", digest=False)

    def check() -> subprocess.CompletedProcess[str]:
        args = ["check", str(WEATHER), "--out", str(out), "--package-name", "weather-mcp", "--config", str(DEMO_CONFIG)]
        return run_cli(*args, env={"TYPED_MCP_NO_CACHE": "", "TYPED_MCP_CACHE_DIR": str(cache_dir)})

    clean = check()
    assert clean.returncode == 0 and "no drift" in clean.stderr, clean.stderr + clean.stdout
    assert "warning: cache entry" not in clean.stderr  # nothing was generated
    (out / "README.md").write_text("edited\n")
    drifted = check()
    assert drifted.returncode == 1 and "README.md" in drifted.stdout, drifted.stderr + drifted.stdout
    assert "warning: cache entry models-" in drifted.stderr  # this one did generate


def test_a_run_record_that_is_not_one_is_not_used(tmp_path: Path):
    cache_dir, out = tmp_path / "cache", tmp_path / "out"
    gen(WEATHER, out, cache_dir)
    (entry,) = entries(cache_dir)["run"]
    record = json.loads((cache_dir / entry).read_text())
    plant(cache_dir, entry, json.dumps({**record, "summary": {**record["summary"], "catalog": None}}), digest=True)
    proc = gen(WEATHER, out, cache_dir)
    assert UNCHANGED not in proc.stderr
    assert f"warning: cache entry {entry[:60]} not used: not a run summary" in proc.stderr, proc.stderr
    assert tree_digest(out) == tree_digest(REPO / "generated" / "weather-mcp")
    # A record of other files (with its digest: someone who can write the whole cache folder) is no
    # match for the folder: the run does the work.
    plant(cache_dir, entry, json.dumps({**record, "files": {**record["files"], "extra.py": "0" * 64}}), digest=True)
    assert UNCHANGED not in gen(WEATHER, out, cache_dir).stderr


def test_a_spec_change_lists_only_the_tools_it_touches_and_gives_the_bytes_of_a_fresh_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The catalog's tools whose sources did not change come from the package's last catalog
    (`catalog/reuse.py`); the rest are listed. A summary edit touches one tool; a field added to a
    model touches the tools that return it and those whose models import it (`Export` holds
    `WeatherData`). The output is byte for byte a run without any cache."""
    from typed_mcp import pipeline
    from typed_mcp.config import load_config
    from typed_mcp.options import GenerateOptions
    from typed_mcp.runtime.contracts import unpack_catalog

    monkeypatch.setenv("TYPED_MCP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TYPED_MCP_NO_CACHE", raising=False)
    config = load_config(DEMO_CONFIG)

    def generate(spec: Path, out: Path, cache: bool = True) -> list[str]:
        said: list[str] = []
        options = GenerateOptions(str(spec), out, package_name="weather-mcp", cache=cache, config=config)
        pipeline.generate(options, step=said.append)
        return [line for line in said if line.startswith("listing ") and "SDK:" not in line]

    assert generate(WEATHER, tmp_path / "first") == ["listing 13 tools with the MCP SDK"]
    spec = json.loads(WEATHER.read_text())
    spec["paths"]["/v1/reports/{report_id}"]["delete"]["summary"] = "Delete a weather report for good"
    spec["components"]["schemas"]["WeatherData"]["properties"]["dew_point"] = {"type": "number"}
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(spec))
    (listed,) = generate(changed, tmp_path / "again")
    assert generate(changed, tmp_path / "fresh", cache=False) == ["listing 13 tools with the MCP SDK"]
    assert tree_digest(tmp_path / "again") == tree_digest(tmp_path / "fresh")

    def tools(out: Path) -> dict[str, str]:
        catalog = json.loads((out / "src" / "weather_mcp" / "catalog.json").read_text())
        return {tool["name"]: json.dumps(tool) for tool in unpack_catalog(catalog)[0]}

    before, after = tools(tmp_path / "first"), tools(tmp_path / "fresh")
    differ = sorted(name for name in after if before[name] != after[name])
    assert "delete_report" in differ and "get_export" in differ and "get_weather" in differ
    # Every tool that changed was listed again, and those that did not were taken as they were.
    assert (
        listed == f"listing {len(differ)} tools with the MCP SDK ({13 - len(differ)} unchanged since the last catalog)"
    )
