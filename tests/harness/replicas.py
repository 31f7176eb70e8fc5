"""Replicas of a generated server behind a real nginx, on 127.0.0.1: the package's own
`deploy/nginx.conf`, with its listen port, replica addresses and file paths set for this machine,
run by Debian's nginx; replica processes started, drained, stopped and killed as an operator does.
Used by `tests/e2e/test_replicas.py` and `bench/load.py --replicas`."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import environment
from harness.demo.process import free_port, stop, tcp_sockets, wait_http

NGINX = os.environ.get("TYPED_MCP_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
# The access log: when, what status, which replica(s) nginx tried and what each answered.
LOG_FORMAT = 'log_format replicas \'$msec $status "$upstream_addr" "$upstream_status"\';'
_SERVER_LINE = re.compile(r"^(\s*)server 127\.0\.0\.1:\d+ (.*);$", re.MULTILINE)


def nginx_missing() -> str | None:
    """Why nginx cannot run here, or None."""
    if not Path(NGINX).is_file():
        return f"nginx not found ({NGINX}): apt-get install nginx-light, or set TYPED_MCP_NGINX"
    return None


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def configure(template: str, port: int, replicas: list[int], down: set[int], folder: Path) -> str:
    """The package's nginx.conf with this run's listen port, replicas (`down` ones marked so), and
    every file nginx writes inside `folder`. Each edit must apply: a changed template fails here."""
    servers = list(_SERVER_LINE.finditer(template))
    if not servers:
        raise ValueError("nginx.conf: no `server 127.0.0.1:PORT ...;` line in the upstream block")
    indent, options = servers[0].group(1), servers[0].group(2)
    lines = [
        f"{indent}server 127.0.0.1:{replica} {options}{' down' if replica in down else ''};" for replica in replicas
    ]
    text = template[: servers[0].start()] + "\n".join(lines) + template[servers[-1].end() :]
    user = pwd.getpwuid(os.getuid()).pw_name
    paths = "\n".join(
        f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    logs = f"    {LOG_FORMAT}\n    access_log {folder / 'access.log'} replicas;\n{paths}"
    edits = [("    access_log off;", logs), ("listen 8000;", f"listen 127.0.0.1:{port};")]
    edits.append(("worker_processes auto;", f"worker_processes 1;\npid {folder / 'nginx.pid'};"))
    if os.getuid() == 0:  # nginx's workers would otherwise drop to `nobody`, who cannot write `folder`
        edits.append(("events {", f"user {user};\n\nevents {{"))
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"nginx.conf: expected {old!r} once")
        text = text.replace(old, new)
    return text


@dataclass
class Balancer:
    """nginx in front of `replicas` (ports), configured from `template` (a package's deploy/nginx.conf)."""

    template: str
    replicas: list[int]
    folder: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write(self, down: set[int]) -> None:
        (self.folder / "nginx.conf").write_text(configure(self.template, self.port, self.replicas, down, self.folder))

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.write(set())
        args = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-e", "stderr"]
        self.proc = subprocess.Popen([*args, "-g", "daemon off;"], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not children_of(self.proc.pid):  # the workers accept; the master only binds
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start (exit {self.proc.poll()})")
            time.sleep(0.05)

    def reload(self, down: set[int], timeout: float = 60.0) -> None:
        """Apply a new configuration as `nginx -s reload` does (SIGHUP to the master), and return once
        every old worker has exited: it has finished the requests it held, and none of them can send
        another request to a replica marked down."""
        assert self.proc is not None
        self.write(down)
        old = children_of(self.proc.pid)
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while True:
            current = children_of(self.proc.pid)
            if current and not current & old:
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not reload (exit {self.proc.poll()}, workers {sorted(current)})")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: finish what is in flight
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> list[tuple[float, int, str, str]]:
        """The access log: (time, status, the replica addresses tried, their statuses)."""
        entries = []
        for line in (self.folder / "access.log").read_text().splitlines():
            when, status, rest = line.split(" ", 2)
            addresses, statuses = re.fullmatch(r'"(.*)" "(.*)"', rest).groups()
            entries.append((float(when), int(status), addresses, statuses))
        return entries


@dataclass
class Replica:
    """One replica of a generated package's server: its CLI over streamable HTTP, stateless, as the
    package's Dockerfile runs it."""

    package: Path
    module: str
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def launch(self) -> None:
        """Start the process (`ready` waits for it to answer)."""
        args = [sys.executable, "-m", self.module, "--transport", "streamable-http", "--stateless"]
        args += ["--host", "127.0.0.1", "--port", str(self.port)]
        env = {**os.environ, **environment(self.package / "src"), **self.env}
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ready(self, timeout: float = 120.0) -> None:
        assert self.proc is not None
        wait_http(f"http://127.0.0.1:{self.port}/health", self.proc, timeout=timeout)

    def start(self) -> None:
        self.launch()
        self.ready()

    def terminate(self, timeout: float = 60.0) -> None:
        """SIGTERM, as an orchestrator stops a replica: it stops accepting, finishes what it holds, exits."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout)

    def held(self) -> int:
        """Requests it holds now: its established inbound connections (nginx opens one per request)."""
        return sum(found.established and found.local == self.port for found in tcp_sockets().values())

    def kill(self) -> None:
        """SIGKILL: gone at once, with whatever it held; returns once the process is reaped (its sockets closed)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop(self.proc)


def rolling_restart(balancer: Balancer, replicas: list[Replica], drain: bool = True) -> list[float]:
    """Replace every replica in turn as the package's nginx.conf says, one more replica at a time (as a
    Kubernetes rolling update with maxSurge 1 and maxUnavailable 0 does): a new process on a new port,
    GET /health, nginx reloaded with the new address instead of the old one (the old workers finish what
    they hold), then SIGTERM to the old process, which finishes what it holds. `replicas` (and the
    balancer's list) then hold the new ones. With `drain=False`, the old process is stopped first, on
    the port nginx still sends to, and the new one started there (what the test shows loses calls).
    Returns the time each new replica was in service."""
    back = []
    for index, old in enumerate(replicas):
        new = Replica(old.package, old.module, old.env, port=old.port if not drain else free_port())
        if drain:
            new.start()
            balancer.replicas[index] = new.port
            balancer.reload(set())
            old.terminate()
        else:
            old.terminate()
            new.start()
        replicas[index] = new
        back.append(time.time())
    return back
