"""The start options every transport reads, stdio included: the auth mode (which only streamable HTTP
takes), the port and the request deadlines. Checked alike whatever the transport, so that a server over
stdio refuses `--auth` at once without loading what serving HTTP needs (`hosting.py`).
"""

from __future__ import annotations

import functools
import ipaddress
import math
import os
import sys

AUTH_MODES = ("none", "forwarded", "oauth")
# The exit status that both uvicorn's and gunicorn's supervisors read as "this worker cannot boot":
# they stop, instead of restarting a worker that would fail the same way forever.
BOOT_FAILURE = 3


class HostingError(ValueError):
    """A hosting option the server cannot start with; the message is one line saying what to change."""


@functools.lru_cache(maxsize=256)  # asked on every request, of the few addresses a server listens on
def is_loopback_host(host: str | None) -> bool:
    """`localhost` or a loopback IP address (brackets allowed). Any other name may resolve anywhere."""
    host = (host or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# Seconds a request's headers (from its first byte) and its body (from its headers) may take to
# arrive over streamable HTTP (`deadlines.py`); `--header-timeout`, `--body-timeout`.
HEADER_SECONDS = 10.0
BODY_SECONDS = 30.0
# Seconds an answer may stand still because its client reads none of it (the server's send buffer
# full): then the connection is dropped, with the answer it held.
WRITE_SECONDS = 30.0


def deadline(value: float | None, variable: str, default: float) -> float:
    """A deadline from its option, else its environment variable, else `default`; a ValueError naming
    the variable when it is not a number of seconds above zero."""
    raw = str(value) if value is not None else os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{variable} must be a number of seconds above 0 (got {raw[:40]!r})")
    return number


def _whole_number(value: int | None, option: str, variable: str, default: int, most: int, what: str) -> int:
    """A whole number from 1 to `most`: the option's `value`, else the environment `variable`, else
    `default`; a HostingError (`what`, the range, what was given and where to set it) otherwise."""
    raw = str(value) if value is not None else os.environ.get(variable, "").strip() or str(default)
    if not raw.isdigit() or not 0 < int(raw) <= most:
        raise HostingError(f"{what} from 1 to {most} (got {raw[:40]!r}; {option} or {variable})")
    return int(raw)


def listen_port(value: int | None, env: str) -> int:
    """The port to bind: `--port`, else `<PREFIX>_PORT` (how a container image or a platform sets it),
    else 8000."""
    return _whole_number(value, "--port", f"{env}_PORT", 8000, 65535, "the port must be a number")


MAX_WORKERS = 64


def worker_count(value: int | None, env: str, stateless: bool, *, http: bool) -> int:
    """Worker processes for streamable HTTP: `--workers`, else `<PREFIX>_WORKERS`, else 1. More than
    one needs a stateless server (a session lives in one process, and a client's next connection may
    reach another) and Linux (where SO_REUSEPORT spreads connections over the workers' sockets)."""
    count = _whole_number(value, "--workers", f"{env}_WORKERS", 1, MAX_WORKERS, "the number of workers must be")
    if count > 1 and not http:
        raise HostingError("--workers is for --transport streamable-http (stdio serves one client)")
    if count > 1 and not stateless:
        raise HostingError(
            f"--workers above 1 needs --stateless ({env}_STATELESS=1): a session lives in one worker process, "
            "and a client's next connection may reach another"
        )
    if count > 1 and not sys.platform.startswith("linux"):
        raise HostingError(
            "--workers above 1 needs Linux (SO_REUSEPORT); elsewhere run the package's asgi app under "
            "uvicorn --workers (docs: hosting)"
        )
    return count


def auth_mode(value: str | None, forward_authorization: bool, env: str) -> str:
    """The auth mode: `--auth`, else `--forward-authorization` (the alias of `forwarded`), else
    `<PREFIX>_AUTH`, else `none`."""
    if value is not None and forward_authorization and value != "forwarded":
        raise HostingError(f"--forward-authorization is --auth forwarded: it cannot go with --auth {value}")
    mode = value or ("forwarded" if forward_authorization else os.environ.get(f"{env}_AUTH", "").strip() or "none")
    if mode not in AUTH_MODES:
        raise HostingError(f"{env}_AUTH must be one of {', '.join(AUTH_MODES)} (got {mode[:40]!r})")
    return mode


def check_bind(transport: str, host: str, mode: str, insecure_no_auth: bool) -> None:
    """Refuse what would let anyone in: a non-loopback HTTP address without an auth mode."""
    if transport != "streamable-http":
        if mode != "none":
            raise HostingError(f"--auth {mode} applies to --transport streamable-http only")
        return
    if mode == "none" and not insecure_no_auth and not is_loopback_host(host):
        raise HostingError(
            f"--host {host or '(all addresses)'} is not a loopback address: choose --auth oauth (clients bring "
            "a token of your authorization server) or --auth forwarded (clients bring the upstream API's "
            "credential), or --insecure-no-auth to serve anyone who can connect"
        )
