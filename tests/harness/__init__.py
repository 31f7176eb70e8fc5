"""The test harness: the demo API, real-spec corpus runs, fidelity checks, strict-client runs
against Prism. Used by the tests, `make corpus`, `make demo` and the benchmark; not shipped."""

from __future__ import annotations

from pathlib import Path

from typed_mcp import children

TESTS = Path(__file__).resolve().parent.parent  # the folder that holds `harness`


def ref_root(spec: str | Path) -> Path | None:
    """The folder local `$ref`s may reach (`--ref-root`) for a spec of a corpus (a folder holding an
    index.tsv): a multi-file entry's own folder, whose files refer to each other across its
    sub-folders (`spec/swagger.yaml` -> `../common/Error.yaml`). None elsewhere: the spec's folder."""
    path = Path(spec).resolve()
    for folder in path.parents:
        if (folder / "index.tsv").is_file():
            entry = path.relative_to(folder).parts
            return folder / entry[0] if len(entry) > 2 else None
    return None


def ref_root_args(spec: str | Path) -> list[str]:
    root = ref_root(spec)
    return ["--ref-root", str(root)] if root else []


def environment(*paths: str | Path) -> dict[str, str]:
    """The environment of a child that imports `paths` (a generated package's src), the harness and typed_mcp."""
    return children.child_env(*paths, TESTS)
