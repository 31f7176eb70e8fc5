"""A real package index on 127.0.0.1 (pypiserver), serving the files of one folder: the release
tests upload to it with a token, the client-setup tests install from it with pip and uvx."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from harness.demo.process import free_port, running


@contextlib.contextmanager
def package_index(packages: Path, htpasswd: Path | None = None) -> Iterator[str]:
    """Yields the index's base URL (its simple API is at `/simple/`). With `htpasswd`, uploads need
    one of its users; without, it only serves (downloads are open either way)."""
    port = free_port()
    index = f"http://127.0.0.1:{port}"
    auth = ["-P", str(htpasswd), "-a", "update"] if htpasswd else ["-P", ".", "-a", "."]
    server = [str(Path(sys.executable).parent / "pypi-server"), "run", "-p", str(port), "-i", "127.0.0.1", *auth]
    with running([*server, str(packages)], f"{index}/simple/"):
        yield index
