"""The tests' servers get ports that nothing else can take between the choice and the bind."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.demo.process import free_port

HARNESS = Path(__file__).resolve().parents[1]


def test_a_free_port_is_one_the_kernel_never_hands_out_for_port_zero():
    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = [free_port() for _ in range(50)]
    assert all(port < low for port in ports), ports  # a stub server binding port 0 cannot take them
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        assert low <= sock.getsockname()[1] <= high


@pytest.mark.slow
def test_processes_that_ask_at_once_never_get_the_same_port():
    code = "from harness.demo.process import free_port\nprint(*(free_port() for _ in range(200)))"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], cwd=HARNESS, stdout=subprocess.PIPE, text=True) for _ in range(4)
    ]
    ports = [int(port) for proc in procs for port in proc.communicate(timeout=60)[0].split()]
    assert len(ports) == 800 and len(set(ports)) == 800
