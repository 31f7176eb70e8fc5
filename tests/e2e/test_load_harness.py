"""`make load`'s harness (`bench/load.py`) counts what its table says: a tiny run of the committed
demo package (one worker, two SDK clients, 20 calls a mix) reports every call answered, the upstream's
own count of reads and of writes (none seen twice), and the calls made by the worker as the upstream
counted them on the worker's connections, found through /proc; the same for the package's own
command line with two forked workers. The load itself is `make load`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO


def rows(markdown: str, server: str = "typed-mcp") -> dict[str, dict[str, str]]:
    """The rows of the run's first table for `server`, by mix: column -> cell."""
    text = markdown.splitlines()
    start = next(index for index, line in enumerate(text) if line.startswith("| "))
    end = next((index for index in range(start, len(text)) if not text[index].startswith("| ")), len(text))
    lines = text[start:end]  # the first table only (the ratios' rows name the server too)
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    table = {}
    for line in lines[1:]:
        cells = dict(zip(head, (cell.strip() for cell in line.strip("|").split("|")), strict=False))
        if cells.get("server") == server:
            table[cells["mix"]] = cells
    return table


@pytest.mark.long  # the load harness itself (make load); make test runs its replicas through test_replicas.py
def test_a_tiny_load_counts_every_call_once_and_at_its_worker(tmp_path: Path):
    out = tmp_path / "load.md"
    args = [sys.executable, str(REPO / "bench" / "load.py"), "--servers", "typed-mcp", "--workers", "1"]
    args += ["--clients", "2", "--calls", "20", "--ramp", "0", "--markdown", str(out)]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)  # a hang, not a speed
    assert run.returncode == 0, run.stderr[-3000:]
    table = rows(out.read_text())
    assert set(table) == {"read", "write"}
    for mix, (reads, writes) in {"read": (20, 0), "write": (0, 20)}.items():
        row = table[mix]
        assert (row["calls"], row["errors"], row["lost"], row["writes twice"]) == ("20", "0", "0", "0"), row
        assert row["upstream reads / writes"] == f"{reads} / {writes}", row
        assert row["calls per worker"] == "20", row  # every upstream request placed on the one worker
        assert row["connections per worker"] == "2", row  # each client session its own connection


@pytest.mark.long
def test_the_packages_own_workers_are_found_and_counted(tmp_path: Path):
    out = tmp_path / "load.md"
    args = [sys.executable, str(REPO / "bench" / "load.py"), "--servers", "typed-mcp-cli", "--workers", "2"]
    args += ["--clients", "4", "--calls", "40", "--ramp", "0", "--mixes", "read", "--markdown", str(out)]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    row = rows(out.read_text(), "typed-mcp-cli")["read"]
    assert (row["calls"], row["errors"], row["lost"], row["upstream reads / writes"]) == ("40", "0", "0", "40 / 0"), row
    made = [int(cell.split()[0].replace(",", "")) for cell in row["calls per worker"].split(" / ")]
    connections = [int(cell) for cell in row["connections per worker"].split(" / ")]
    assert len(made) == 2 and len(connections) == 2, row  # both forked workers found through /proc
    assert sum(connections) == 4, row  # each client session's connection, on the worker that accepted it


@pytest.mark.long
def test_the_floor_answers_every_call_and_the_ratios_measure_from_it(tmp_path: Path):
    out = tmp_path / "load.md"
    args = [sys.executable, str(REPO / "bench" / "load.py"), "--servers", "floor,typed-mcp,FastMCP"]
    args += ["--workers", "1", "--clients", "2", "--calls", "20", "--ramp", "0", "--markdown", str(out)]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]  # every answer, the floor's too, checked by the clients
    text = out.read_text()
    for mix, counted in {"read": "20 / 0", "write": "0 / 20"}.items():
        row = rows(text, "floor")[mix]
        assert (row["calls"], row["errors"], row["lost"], row["upstream reads / writes"]) == ("20", "0", "0", counted)
    lines = text.splitlines()
    at = next(index for index, line in enumerate(lines) if "above the floor" in line)  # the ratios' head
    ratios = [line for line in lines[at:] if line.startswith("| typed-mcp | ")]
    assert len(ratios) == 2 and lines[at].count("|") == ratios[0].count("|"), text
    ours, theirs = ratios[0].split("|")[7].split(" / ")  # ms per call above the floor's
    float(ours), float(theirs)


@pytest.mark.long
def test_pinned_the_server_and_the_load_run_on_cpus_of_their_own(tmp_path: Path):
    """`--pin`: the server's workers on CPU 0, the clients and the upstream on the others (taskset),
    said in the run's line; every call still answered and counted."""
    if len(os.sched_getaffinity(0)) < 2 or 0 not in os.sched_getaffinity(0):
        pytest.skip("--pin needs CPU 0 and another CPU; this process may use fewer")
    out = tmp_path / "load.md"
    args = [sys.executable, str(REPO / "bench" / "load.py"), "--servers", "typed-mcp", "--workers", "1", "--pin"]
    args += ["--clients", "2", "--calls", "20", "--ramp", "0", "--mixes", "read", "--markdown", str(out)]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text()
    assert "the server's workers on CPU 0, the load on CPU " in text, text[:600]
    row = rows(text)["read"]
    assert (row["calls"], row["errors"], row["lost"], row["upstream reads / writes"]) == ("20", "0", "0", "20 / 0"), row


@pytest.mark.long
def test_raw_clients_check_every_answer_of_both_servers(tmp_path: Path):
    """`--raw-clients`: stateless 2026-07-28 requests posted with aiohttp rather than the SDK's client,
    said in the run's line; typed-mcp's and FastMCP's answers all checked and counted (a wrong
    answer would be an error: the same checks as the SDK's clients)."""
    out = tmp_path / "load.md"
    args = [sys.executable, str(REPO / "bench" / "load.py"), "--servers", "typed-mcp,FastMCP", "--workers", "1"]
    args += ["--raw-clients", "--clients", "2", "--calls", "20", "--ramp", "0", "--markdown", str(out)]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text()
    assert "clients: `load_clients.py --raw 2026-07-28`" in text, text[:600]
    for server in ("typed-mcp", "FastMCP"):
        for mix, counted in {"read": "20 / 0", "write": "0 / 20"}.items():
            row = rows(text, server)[mix]
            assert (row["calls"], row["errors"], row["lost"], row["upstream reads / writes"]) == (
                "20",
                "0",
                "0",
                counted,
            )
