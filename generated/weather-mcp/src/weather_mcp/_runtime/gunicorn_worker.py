"""gunicorn's uvicorn worker with the limits of `deadlines.py`: uvicorn-worker's `UvicornWorker`
serving with `DeadlineProtocol` (a request's headers within 10 s of their first byte, its body within
30 s, else 408 and the connection closed; a head of at most 64 KiB; an answer the client reads none of
for 30 s dropped), which uvicorn's own protocols under gunicorn lack: a client sending its headers a
byte a second would hold a connection for ever.

    gunicorn -k <module>._runtime.gunicorn_worker.DeadlineWorker -w 4 -b 0.0.0.0:8000 '<module>.asgi:create_app()'

Needs gunicorn and uvicorn-worker installed beside the package (they are not its dependencies); only
gunicorn, naming this class, imports this module."""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker  # type: ignore[import-untyped]  # no py.typed

from .deadlines import DeadlineProtocol


class DeadlineWorker(UvicornWorker):  # type: ignore[misc]  # gunicorn's worker base is untyped
    CONFIG_KWARGS: dict[str, Any] = {**UvicornWorker.CONFIG_KWARGS, "http": DeadlineProtocol}
