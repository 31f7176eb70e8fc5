"""What a server builds once (its catalog, each tool's module, models and argument model) lives as
long as the server: `settle` takes it out of the cyclic garbage collector's sight (`gc.freeze`), so
that a full collection while calls are served walks only what was allocated since. Without it, the
demo server under 400 calls a second paused every call for 45 to 67 ms every few seconds, walking
its own long-lived objects. Frozen objects are still freed by reference counting; only cycles among
them are kept."""

from __future__ import annotations

import gc


def settle(collect: bool = False) -> None:
    """Freeze what exists now; with `collect`, first collect what is already garbage (at start-up,
    before the first call: a full collection's pause then costs no one)."""
    if collect:
        gc.collect()
    gc.freeze()
