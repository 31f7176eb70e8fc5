"""`make directory`'s sample and failure classes (tests/harness/directory.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.directory import classify, sample


def test_the_sample_is_every_kth_file_by_path_whatever_the_file_system_order(tmp_path):
    names = [f"p{i:02d}/api.json" if i % 3 else f"p{i:02d}.json" for i in range(20)]
    for name in reversed(names):  # created in the opposite order
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / "_index.js").write_text("")
    picked = [p.relative_to(tmp_path).as_posix() for p in sample(tmp_path, 5)]
    assert picked == [names[0], names[4], names[8], names[12], names[16]]
    assert len(sample(tmp_path, 0)) == len(sample(tmp_path, 99)) == 20


def test_failures_are_classed_by_what_they_say_not_by_their_spec():
    assert classify("exit 1: error: a/b.json: model generation: could not settle class names after 20 renames") == (
        "class 3: class names never settle"
    )
    assert classify("exit 7: error: the generated package does not start: error: x").startswith("exit 7")
    assert classify("time budget of 180s") == "time budget exceeded"
    first = classify("exit 1: error: api/x.json: #/paths/~1a/get: schema 'Foo' has 3 problems")
    second = classify("exit 1: error: api/y.json: #/paths/~1b/post: schema 'Bar' has 12 problems")
    assert first == second and first.startswith("other: ")


def test_a_resumed_run_keeps_the_rows_it_has_and_runs_only_the_others(tmp_path):
    """`--resume`: a long sample stopped part-way goes on where it stopped; the report holds every row
    in sample order, the kept ones as they were."""
    folder = tmp_path / "api"
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {
                "get": {
                    "responses": {
                        "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
                    }
                }
            }
        },
    }
    for name in ("a.json", "b.json", "c.json"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(spec))
    report = tmp_path / "report"
    kept = [{"spec": "a.json", "operations": 7, "tools": 7, "seconds": 1.5}, {"spec": "c.json", "error": "exit 3: x"}]
    report.with_suffix(".json").write_text(json.dumps(kept))
    report.with_suffix(".md").write_text("# t\n\n`python -m harness.directory x`: 2 of 3 specs, 2.0 minutes wall.\n")
    tests = Path(__file__).resolve().parent.parent  # tests/, where `harness` is a package
    done = subprocess.run(
        [sys.executable, "-m", "harness.directory", str(folder), "--sample", "0", "--no-ts", "--jobs", "1"]
        + ["--report", str(report), "--resume"],
        cwd=tests,
        env={**os.environ, "PYTHONPATH": str(tests)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    rows = json.loads(report.with_suffix(".json").read_text())
    assert [row["spec"] for row in rows] == ["a.json", "b.json", "c.json"], done.stderr
    assert rows[0]["operations"] == 7 and rows[2]["error"] == "exit 3: x"  # kept as they were, not run again
    assert rows[1]["operations"] == 1 and rows[1]["error"] == ""  # the one missing was run
    assert done.returncode == 1  # a kept failure still fails the run
    assert "Resumed: 2 rows" in report.with_suffix(".md").read_text()
