"""Environment: the peers' own venvs (FastMCP, openapi-python-client) and the machine's description."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

from common import log


def ensure_venv(venv: Path, package: str, version: str) -> str:
    """Create `venv` with package==version (only when missing or different); return the version."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip() == version:
            return version
    else:
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log(f"pip install {package}=={version} into {venv}")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{package}=={version}"],
        check=True,
    )
    return subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()


def machine_info() -> dict[str, str]:
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    import importlib.metadata as metadata

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "typed-mcp": metadata.version("typed-mcp"),
        "mcp SDK": metadata.version("mcp"),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
