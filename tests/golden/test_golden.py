"""The golden records (tests/golden/, `harness.golden`): each committed package is what the generator
writes today, byte for byte. A difference prints as a unified diff; after an intended change of output,
`make golden` rewrites the records and the diff is reviewed with the change."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.golden import CASES, differences, generate_all


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, Path]:
    return generate_all(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("case", CASES, ids=[case.package for case in CASES])
def test_the_golden_record_is_what_the_generator_writes(case, fresh):
    assert case.record.is_dir(), f"{case.record} is missing: `make golden` writes it"
    diff = differences(case.record, fresh[case.package])
    if diff:
        pytest.fail(f"the generator's output changed (`make golden` if it is meant to):\n{diff}", pytrace=False)


def test_a_changed_file_shows_as_a_unified_diff(tmp_path):
    """The comparison's own check: a one-line edit, a new file and a missing one are each reported."""
    old, new = tmp_path / "old", tmp_path / "new"
    for root in (old, new):
        (root / "src").mkdir(parents=True)
        (root / "src" / "server.py").write_text("a = 1\nb = 2\n")
    (new / "src" / "server.py").write_text("a = 1\nb = 3\n")
    (old / "gone.txt").write_text("x\n")
    (new / "added.txt").write_text("y\n")
    (new / "src" / "__pycache__").mkdir()
    (new / "src" / "__pycache__" / "server.pyc").write_bytes(b"\0")  # caches are not output
    diff = differences(old, new)
    assert "-b = 2\n+b = 3\n" in diff and "--- a/old/src/server.py" in diff
    assert "+y\n" in diff and "-x\n" in diff and "__pycache__" not in diff
    assert differences(old, old) == ""
