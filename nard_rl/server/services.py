"""What every route of the HTTP API shares: the analyzer, the queues and the sessions.

``create_app`` builds one ``Services`` and keeps it on ``app.state.services``; a route
receives it through the ``ServicesDep`` dependency (``svc: ServicesDep``), so the routers
(``routes_*.py``) hold no globals and several apps can live in one process (the tests
build many).  Work goes to one of three places, so that no kind of request waits behind
another:

* 0-ply evaluations to the micro-batcher (``svc.batcher.submit``: batched across
  requests, answered in milliseconds);
* searches and cube analyses to the search queue (``svc.search``: one thread, a bounded
  number of waiting jobs, 503 beyond);
* game-session actions to their own thread (``svc.session``), with their own caches,
  never behind a search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from fastapi import Depends, Request
from fastapi.responses import Response

from nard_rl.server.analysis import Analyzer
from nard_rl.server.batching import MicroBatcher, WorkQueue
from nard_rl.server.config import ServerConfig
from nard_rl.server.sessions import SessionStore
from nard_rl.server.state import DecisionState, state_from_request


class JSONResponse(Response):
    """JSON rendered by orjson: the standard encoder took a tenth of a hint's server time."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


def error_response(status: int, message: str, key: str = "error") -> JSONResponse:
    """The API's error body: ``{"error": message}`` (``{"message": ...}`` on wildbg's)."""
    return JSONResponse({key: message}, status_code=status)


@dataclass
class Services:
    config: ServerConfig
    analyzer: Analyzer
    """The analyzer of the requests (hints, evaluations, actions, the gnubg port)."""
    batcher: MicroBatcher
    search: WorkQueue
    """Searches and cube analyses of the requests (one thread, bounded queue)."""
    session: WorkQueue
    """Game-session actions (their own thread and analyzer caches)."""
    sessions: SessionStore

    def parse(self, body: dict[str, Any]) -> DecisionState:
        """A request's decision state (``nard_rl.server.state``; the server's rule set
        for requests that name none)."""
        return state_from_request(body, self.config.rules)

    def check_ply(self, ply: int | None, default: int | None = None) -> int:
        """The lookahead of a request: its own (at most ``max_ply``) or ``default``."""
        if ply is None:
            return self.config.ply if default is None else default
        if ply > self.config.max_ply:
            raise ValueError(
                f'"ply" {ply} is deeper than this server allows (max_ply {self.config.max_ply})'
            )
        return ply

    async def rank(self, state: DecisionState, ply: int, top: int | None = None) -> dict[str, Any]:
        """Every legal play ranked at ``ply``: 0-ply through the micro-batcher, deeper
        through the search queue."""
        an = self.analyzer
        if ply == 0:
            plays = an.plays(state)
            probs = await self.batcher.submit(plays.afters, state.rules.name)
            return an.ranking(state, plays, probs, top)
        return await self.search.run(an.rank, state, ply, top)  # type: ignore[return-value]


def services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(services)]
"""A route's handle on the shared services: ``async def route(svc: ServicesDep)``."""
