"""Golden records (as openapi-python-client keeps them): complete generated packages committed under
tests/golden/, so that any change of the generator's output shows in review as a diff of files.
`tests/golden/test_golden.py` regenerates each and compares it byte for byte; `make golden` (this
module run as a program) rewrites them after an intended change.

The demo package (generated/weather-mcp, `make generate`, compared by `make check`) is the fourth.

A record leaves out `_runtime/`: it is the generator's runtime package copied byte for byte, the same
in every package, and tests/unit/test_runtime_package.py holds every package's copy to its source."""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from typed_mcp.write import CACHES

REPO = Path(__file__).resolve().parent.parent.parent
RUNTIME = "_runtime"  # the copied runtime, not recorded (see above)
GOLDEN = REPO / "tests" / "golden"


@dataclass(frozen=True)
class Case:
    package: str  # the distribution name, and the folder under tests/golden/
    spec: str  # paths relative to the repository: the package records the spec's and the config's names
    options: tuple[str, ...] = ()

    @property
    def record(self) -> Path:
        return GOLDEN / self.package


CASES = (
    # a corpus spec curated by a config: selection, rename, titles, auth, a fixed header
    Case(
        "petstore-curated-mcp",
        "tests/golden/specs/petstore-expanded.yaml",
        ("--config", "tests/golden/specs/petstore-curated.toml"),
    ),
    # Swagger 2.0, converted to OpenAPI 3.0 first
    Case("petstore-swagger2-mcp", "tests/golden/specs/petstore-swagger2.json"),
    # the data-tools profile, on the demo's snapshot
    Case("weather-data-mcp", "specs/weather-api.json", ("--profile", "data-tools")),
)


def start(case: Case, out: Path) -> subprocess.Popen[str]:
    """`typed-mcp generate` of `case` into `out`, started from the repository's folder. The listing
    check is off: it changes no byte of the output, and the tests that serve packages run it."""
    args = [case.spec, "--out", str(out), "--package-name", case.package, *case.options]
    return subprocess.Popen(
        [sys.executable, "-m", "typed_mcp", "generate", *args, "--no-verify", "--no-cache", "-q"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def generate_all(root: Path, timeout: float = 600) -> dict[str, Path]:
    """Every case generated under `root` at once (each generation is mostly waiting on one core)."""
    running = {case.package: (start(case, root / case.package), root / case.package) for case in CASES}
    for package, (proc, _) in running.items():
        output, _ = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"generating the golden record {package} failed ({proc.returncode}):\n{output}")
    return {package: out for package, (_, out) in running.items()}


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not CACHES.intersection(p.relative_to(root).parts)
        and RUNTIME not in p.relative_to(root).parts
    }


def differences(record: Path, fresh: Path) -> str:
    """A unified diff of every file that differs between the committed record and a fresh generation
    (a binary or undecodable file is named only); empty when they are byte for byte the same."""
    old, new = files(record), files(fresh)
    out: list[str] = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) == new.get(name):
            continue
        try:
            before = old.get(name, b"").decode().splitlines(keepends=True)
            after = new.get(name, b"").decode().splitlines(keepends=True)
        except UnicodeDecodeError:
            out.append(f"binary file {name} differs\n")
            continue
        label = f"{record.name}/{name}"
        out.extend(difflib.unified_diff(before, after, f"a/{label}", f"b/{label}"))
    return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description="Rewrite the golden records under tests/golden/.")
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        for package, fresh in generate_all(Path(tmp)).items():
            record = GOLDEN / package
            state = ("changed" if differences(record, fresh) else "unchanged") if record.is_dir() else "new"
            shutil.rmtree(record, ignore_errors=True)
            shutil.copytree(fresh, record, ignore=shutil.ignore_patterns(*CACHES, RUNTIME))
            print(f"{record.relative_to(REPO)}: {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
