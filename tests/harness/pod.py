"""A command run the way a Kubernetes pod spec says its container runs, without a cluster: bubblewrap
(Debian's `bwrap`) gives it a private mount namespace in which the root filesystem is read-only when
the container's `readOnlyRootFilesystem` says so, each `emptyDir` volume is a fresh world-writable
tmpfs of its `sizeLimit` at its `mountPath`, and `setpriv` then drops to the pod's `runAsUser` and
`runAsGroup` with no supplementary groups, no capabilities and no new privileges. The settings are
read from the manifest itself, so the test exercises what the file promises, not a copy of it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

BWRAP = os.environ.get("TYPED_MCP_BWRAP") or shutil.which("bwrap") or "/usr/bin/bwrap"
_UNITS = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}


def bwrap_missing() -> str | None:
    """Why the sandbox cannot run here, or None."""
    if not Path(BWRAP).is_file():
        return f"bwrap not found ({BWRAP}): apt-get install bubblewrap, or set TYPED_MCP_BWRAP"
    return None


def quantity_bytes(quantity: str) -> int:
    """A Kubernetes binary quantity (`64Mi`) in bytes."""
    unit = quantity[-2:]
    return int(quantity[:-2]) * _UNITS[unit] if unit in _UNITS else int(quantity)


def _closed_ancestor(path: Path) -> Path | None:
    """The topmost folder above `path` that other users may not enter (a 0700 home or work tree)."""
    for folder in reversed(path.parents):
        if folder != Path("/") and not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def pod_command(pod: dict, container: dict, command: list[str], reads: list[Path]) -> list[str]:
    """`command` in the sandbox of `pod` (a pod template's spec) and its `container`. `reads` are the
    trees the command needs (the interpreter, the venv, the package): one behind a folder the pod's
    user may not enter is mounted back, read-only, inside an empty tmpfs over that folder, as an image
    would hold it in a folder of its own."""
    pod_context, context = pod.get("securityContext", {}), container.get("securityContext", {})
    user = context.get("runAsUser", pod_context.get("runAsUser"))
    group = context.get("runAsGroup", pod_context.get("runAsGroup"))
    assert user not in (None, 0) and group is not None, "the pod names a user that is not root"
    root = "--ro-bind" if context.get("readOnlyRootFilesystem") else "--bind"
    args = [BWRAP, "--die-with-parent", root, "/", "/", "--dev", "/dev", "--proc", "/proc"]
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        empty = volumes[mount["name"]]["emptyDir"]  # the only kind of volume a generated manifest uses
        size = ["--size", str(quantity_bytes(empty["sizeLimit"]))] if "sizeLimit" in empty else []
        args += ["--perms", "1777", *size, "--tmpfs", mount["mountPath"]]
    resolved = [Path(path).resolve() for path in reads]
    closed = sorted({folder for path in resolved if (folder := _closed_ancestor(path)) is not None})
    for folder in closed:
        args += ["--tmpfs", str(folder)]
    for path in resolved:
        if any(folder in path.parents for folder in closed):
            args += ["--ro-bind", str(path), str(path)]
    drop = ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    if container.get("securityContext", {}).get("allowPrivilegeEscalation") is False:
        drop.append("--no-new-privs")
    return [*args, "--chdir", "/", "--", "setpriv", f"--reuid={user}", f"--regid={group}", *drop, *command]


def command_pid(sandbox_pid: int) -> int:
    """The pid of the command bwrap runs (its one child, once it has exec'd)."""
    children = Path(f"/proc/{sandbox_pid}/task/{sandbox_pid}/children").read_text().split()
    (only,) = children
    return int(only)
