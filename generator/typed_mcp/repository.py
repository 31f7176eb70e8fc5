"""Paths a committed config names (`source`, `out`, `snapshot`, `overlays`), and the ones `init` writes
into it: each stays inside the repository, the config's folder. A one-line change to a config must not
make a run read a file elsewhere on the machine (into a package, or an error message), nor write a
fetched spec into another project, a `site-packages` folder or the repository's own tooling.

The command line's own paths (`--out`, `--snapshot`, SOURCE) are the user's choice and are not
checked here."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

# Written paths also go unquoted into a Makefile and a workflow's shell lines (`init`): only these.
PLAIN_PATH = re.compile(r"[A-Za-z0-9._/-]+")
# A snapshot is a spec document whatever its folder, and its name says so (no suffix: the command
# adds the spec's own).
SPEC_SUFFIXES = ("", ".json", ".yaml", ".yml")

Use = Literal["read", "folder", "spec"]  # read a file; write the package folder; write a spec snapshot


def path_problem(root: Path, path: str, use: Use = "read") -> str | None:
    """Why `path` (relative to `root`) may not be used, or None. It must be relative, without `..`,
    and lead inside `root` once every symbolic link on the way is followed. A written path must also
    be plain (letters, digits, '.', '_', '-', '/'), not the repository itself, and in no hidden folder
    (`.git`, `.github`: hooks, config and workflows run); a snapshot keeps a spec's suffix."""
    parts = PurePosixPath(path).parts
    if not path or path.startswith(("/", "\\")) or Path(path).is_absolute() or ".." in parts:
        return f"{path!r}: use a path relative to the config's folder, without '..'"
    if use != "read" and not PLAIN_PATH.fullmatch(path):
        return f"{path!r}: use a relative path of letters, digits, '.', '_', '-', '/'"
    try:
        base, real = root.resolve(), (root / path).resolve()
    except (OSError, RuntimeError):  # a symbolic link loop
        return f"{path!r}: cannot be resolved (a symbolic link loop)"
    if real != base and base not in real.parents:
        return f"{path!r} leads outside the config's folder {base} (through a symbolic link)"
    inside = real.relative_to(base).parts
    if use != "read" and not inside:
        return f"{path!r} is the config's folder itself"
    if use != "read" and any(part.startswith(".") for part in inside):
        return f"{path!r} is in a hidden folder (.git, .github...), whose files tools run: not a place to write"
    if use == "spec" and PurePosixPath(path).suffix.lower() not in SPEC_SUFFIXES:
        return f"{path!r}: a snapshot is a spec file: name it .json, .yaml or .yml"
    return None
