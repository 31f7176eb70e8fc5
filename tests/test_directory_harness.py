"""`make directory`'s sample and failure classes (tests/harness/directory.py)."""

from __future__ import annotations

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
