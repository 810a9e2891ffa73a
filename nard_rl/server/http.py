"""The HTTP connection settings of ``nard serve``: uvicorn's options and a guarded h11
protocol, so that idle, half-sent or slow connections cannot hold the service.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but a new
connection that never sends a request, or one that sends a request head one byte at a
time (each byte cancels the keep-alive timer), stays open for ever; a few hundred such
sockets took the service down.  ``GuardedH11Protocol`` gives every request head
``header_timeout`` seconds from the moment the connection is opened or the previous
response is sent; the body has ``body_timeout_s`` per part (``app.Gate``), the head at
most ``max_header_bytes`` (h11's limit), and ``limit_concurrency`` caps the connections
and requests in progress (503 beyond).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from nard_rl.server.config import ServerConfig


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head (module docstring)."""

    header_timeout: float = 10.0
    """Seconds; ``nard serve`` sets it from ``ServerConfig.header_timeout_s`` (in every
    worker process) before serving."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_cycle: object = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            self._head_timer.cancel()  # type: ignore[union-attr]
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        waiting = self.cycle is self._head_cycle  # no new request since the timer started
        if waiting and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not self._head_cycle:  # a request head arrived: its body is timed
            self._cancel_head_timer()  # by the app, its answer by nobody
            self._head_cycle = self.cycle

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._arm_head_timer()  # the next request's head has its own deadline
        super().on_response_complete()  # (a pipelined request, handled here, disarms it)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)


def uvicorn_options(cfg: ServerConfig) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run``/``uvicorn.Config`` for ``cfg``'s limits
    (the protocol's head deadline is set on the class: ``GuardedH11Protocol``)."""
    GuardedH11Protocol.header_timeout = cfg.header_timeout_s
    return {
        "http": GuardedH11Protocol,
        "timeout_keep_alive": cfg.timeout_keep_alive,
        "limit_concurrency": cfg.limit_concurrency,
        "h11_max_incomplete_event_size": cfg.max_header_bytes,
        "timeout_graceful_shutdown": 5,
    }
