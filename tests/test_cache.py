"""The generation cache: a regeneration of unchanged inputs reuses models and the tool catalog,
gives the same bytes as a fresh run, and any change of input is a miss."""

from __future__ import annotations

import json
from pathlib import Path

from support import DEMO_CONFIG, REPO, run_cli, tree_digest

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
    found: dict[str, list[str]] = {"models": [], "catalog": []}
    for path in sorted(cache_dir.iterdir()):
        found[path.name.split("-")[0]].append(path.name)
    return found


def test_unchanged_inputs_hit_changed_inputs_miss(tmp_path: Path):
    cache_dir = tmp_path / "cache"
    gen(WEATHER, tmp_path / "fresh", cache_dir)
    first = entries(cache_dir)
    assert len(first["models"]) == 1 and len(first["catalog"]) == 1
    gen(WEATHER, tmp_path / "again", cache_dir)
    assert entries(cache_dir) == first  # nothing new: both steps were found
    assert tree_digest(tmp_path / "again") == tree_digest(tmp_path / "fresh")
    assert tree_digest(tmp_path / "fresh") == tree_digest(REPO / "generated" / "weather-mcp")  # = a run without cache

    # A hit really is used: a (deliberately) altered entry shows up in the output.
    catalog_entry = cache_dir / first["catalog"][0]
    packed = json.loads(catalog_entry.read_text())
    packed["tools"][0]["description"] = "from the cache"
    catalog_entry.write_text(json.dumps(packed))
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
