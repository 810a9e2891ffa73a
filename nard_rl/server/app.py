"""The HTTP API of ``nard serve`` (FastAPI; OpenAPI docs at ``/docs``, served offline).

Routes, one ``APIRouter`` per concern (request and response bodies in
``nard_rl.server.models``, the shared services in ``nard_rl.server.services``):

* ``routes_health``: ``GET /health``; ``GET /`` the web board (static files, no build step);
* ``routes_hint``: ``POST /v1/hint`` (every play ranked, or without dice the cube
  analysis), ``POST /v1/evaluate`` (a batch of positions), ``POST /v1/action`` (the bot's
  decision in a game state, for opponent backends);
* ``routes_sessions``: ``/v1/games``, game and match sessions against the bot;
* ``routes_wildbg``: ``GET /move``, ``GET /eval``, wildbg's routes and JSON shapes;
* ``routes_analyze``: ``POST /v1/analyze``, a match file analysed;
* ``routes_rollout``: ``/v1/rollout``, rollouts as background jobs;
* ``docs``: ``GET /docs``, Swagger UI from the package's own files.

A new router takes the shared services as ``svc: ServicesDep`` and is included below
with one ``app.include_router(...)`` line.  Connection limits (head deadline,
keep-alive, concurrency) are uvicorn's, set by ``nard_rl.server.http``.

Errors: a malformed body or query gets 422 (shape) or 400 (meaning: board, ID, dice,
cube, score, a ply above ``max_ply``), an action the rules forbid 409 with the rule id, an
unknown game 404, a body over the limit 413, a body that stalls 408, a client over its
session quota 429, a full search queue or session store 503; the JSON error body is
``{"error": "..."}`` (``{"message": ...}`` on the wildbg routes, as wildbg answers).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from nard_rl.engine.game import IllegalActionError
from nard_rl.server import (
    docs,
    routes_analyze,
    routes_health,
    routes_hint,
    routes_rollout,
    routes_sessions,
    routes_wildbg,
)
from nard_rl.server.analysis import Analyzer
from nard_rl.server.batching import MicroBatcher, ServerBusy, WorkQueue
from nard_rl.server.config import ServerConfig
from nard_rl.server.jsonl import error_text
from nard_rl.server.routes_health import STATIC
from nard_rl.server.routes_wildbg import WILDBG_PATHS
from nard_rl.server.services import JSONResponse, Services, error_response
from nard_rl.server.sessions import SessionError, SessionLimit, SessionStore

DEFAULT_EXPECTED = "a JSON object (its schema is at /docs)"


class Gate:
    """ASGI middleware in front of every route: reads a request's whole body before
    anything parses it, 413 beyond ``limit`` bytes (declared or chunked), 408 when the
    body stalls for ``timeout`` seconds; counts the requests in progress for the
    micro-batcher."""

    def __init__(self, app: Any, limit: int, timeout: float, batcher: MicroBatcher) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout
        self.batcher = batcher

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.batcher.active += 1
        try:
            await self._gated(scope, receive, send)
        finally:
            self.batcher.active -= 1

    async def _gated(self, scope: dict, receive: Callable, send: Callable) -> None:
        too_big = error_response(413, f"request body over {self.limit} bytes")
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.limit + 1
                if declared > self.limit:
                    await too_big(scope, receive, send)
                    return
        chunks: list[bytes] = []
        seen = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except asyncio.TimeoutError:  # noqa: UP041 (not the builtin before 3.11)
                stalled = f"the request body stalled for {self.timeout:g} s (body_timeout_s)"
                await error_response(408, stalled)(scope, receive, send)
                return
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await too_big(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)


def _key(request: Request) -> str:
    return "message" if request.url.path in WILDBG_PATHS else "error"


def _expected(request: Request) -> str:
    """What the route's body should be (its model's ``EXPECTED``), for error messages."""
    route = request.scope.get("route")
    field = getattr(route, "body_field", None)
    model = getattr(field, "type_", None) or getattr(
        getattr(field, "field_info", None), "annotation", None
    )
    return getattr(model, "EXPECTED", None) or DEFAULT_EXPECTED


def _validation_message(request: Request, exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        kind = err.get("type", "")
        if kind == "json_invalid":
            detail = str(err.get("ctx", {}).get("error", "")) or "invalid JSON"
            return f"the body is not valid JSON ({detail}); expected {_expected(request)}"
        if loc == ("body",) and kind in ("model_attributes_type", "dict_type", "missing"):
            return f"expected {_expected(request)}"
        where = ".".join(str(x) for x in loc if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)[:2000]


FASTAPI_BODY_ERROR = "There was an error parsing the body"
"""FastAPI's message for a body its JSON parser raised on with anything but a
``JSONDecodeError`` (nesting too deep, an integer too long, invalid UTF-8)."""


def _unreadable_body(request: Request, cause: BaseException | None) -> str:
    if isinstance(cause, RecursionError):
        why = "it nests too deeply"
    elif isinstance(cause, UnicodeDecodeError):
        why = f"it is not valid UTF-8 (byte 0x{cause.object[cause.start]:02x} at {cause.start})"
    else:
        why = error_text(cause, 200) if cause is not None else "unreadable"
    return f"the body could not be read as JSON: {why}; expected {_expected(request)}"


def create_app(config: ServerConfig | None = None, analyzer: Analyzer | None = None) -> FastAPI:
    """The application; ``analyzer`` may be shared (tests build one for many apps)."""
    cfg = (config or ServerConfig()).validate()
    an = analyzer or Analyzer(
        cfg.net, ply=cfg.ply, cube_ply=cfg.cube_ply, cube_rollout=cfg.cube_rollout
    )
    batcher = MicroBatcher(
        lambda rows, key: an.probabilities(rows, key),
        max_rows=cfg.max_batch,
        max_wait=cfg.max_wait_ms / 1000.0,
        inline=an.probabilities_if_free,
        inline_rows=cfg.inline_rows,
    )
    sessions = SessionStore(
        an.fork(),  # its own caches: a session never waits for a search to finish
        max_sessions=cfg.max_sessions,
        max_per_client=cfg.max_sessions_per_client,
        idle_s=cfg.session_idle_s,
        games_kept=cfg.session_games_kept,
    )
    svc = Services(
        config=cfg,
        analyzer=an,
        batcher=batcher,
        search=WorkQueue("search", max_pending=cfg.max_queued_searches),
        session=WorkQueue("session", max_pending=cfg.max_queued_actions),
        sessions=sessions,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if cfg.torch_threads:
            import torch

            torch.set_num_threads(cfg.torch_threads)  # spinning threads cost latency
        await batcher.start()
        await batcher.run_sync(an.evaluator, cfg.rules)  # load the net before the first call
        with contextlib.ExitStack() as stack:
            gnubg = None
            if cfg.gnubg_external is not None:
                from nard_rl.server.gnubg_external import start_gnubg_server

                log = stack.enter_context(open(cfg.gnubg_log, "a")) if cfg.gnubg_log else None
                gnubg = await start_gnubg_server(
                    an.fork(),
                    cfg.gnubg_host,
                    cfg.gnubg_external,
                    WorkQueue("gnubg"),
                    log,
                    ply=cfg.external_ply,
                    config=cfg,
                )
            try:
                yield
            finally:
                if gnubg is not None:
                    gnubg.close()
                await batcher.stop()
                svc.search.close()
                svc.session.close()

    app = FastAPI(
        title="nard-rl",
        version="0.1.0",
        description="Move and cube analysis, a bot opponent and game sessions for Nard "
        "(backgammon); wildbg-compatible /move and /eval.",
        lifespan=lifespan,
        docs_url=None,  # served from the package's own files (``nard_rl.server.docs``)
        redoc_url=None,
    )
    app.state.services = svc
    app.state.analyzer = an
    app.state.batcher = batcher
    app.state.sessions = sessions
    app.state.config = cfg
    batcher.active = 0
    app.add_middleware(Gate, limit=cfg.max_body_bytes, timeout=cfg.body_timeout_s, batcher=batcher)

    # errors ----------------------------------------------------------------------------------
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, _validation_message(request, exc), _key(request))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == FASTAPI_BODY_ERROR:
            return error_response(422, _unreadable_body(request, exc.__cause__), _key(request))
        return error_response(exc.status_code, str(exc.detail), _key(request))

    @app.exception_handler(IllegalActionError)
    async def _illegal(request: Request, exc: IllegalActionError) -> JSONResponse:
        return error_response(409, str(exc))

    @app.exception_handler(SessionError)
    async def _missing(request: Request, exc: SessionError) -> JSONResponse:
        return error_response(404, str(exc.args[0]))

    @app.exception_handler(SessionLimit)
    async def _full(request: Request, exc: SessionLimit) -> JSONResponse:
        return error_response(exc.status, str(exc))

    @app.exception_handler(ServerBusy)
    async def _busy(request: Request, exc: ServerBusy) -> JSONResponse:
        response = error_response(503, str(exc), _key(request))
        response.headers["Retry-After"] = "1"
        return response

    @app.exception_handler(ValueError)
    async def _bad(request: Request, exc: ValueError) -> JSONResponse:
        return error_response(400, str(exc) or type(exc).__name__, _key(request))

    # routes ----------------------------------------------------------------------------------
    app.include_router(routes_health.router)
    app.include_router(routes_hint.router)
    app.include_router(routes_sessions.router)
    app.include_router(routes_wildbg.router)
    app.include_router(routes_rollout.router)
    app.include_router(routes_analyze.router)
    app.include_router(docs.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
