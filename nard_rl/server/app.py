"""The HTTP API of ``nard serve`` (FastAPI; OpenAPI docs at ``/docs``).

Routes (request and response bodies in ``nard_rl.server.models``):

* ``GET /health``; ``GET /`` the web board (static files, no build step);
* ``POST /v1/hint``: every play ranked, or without dice the cube analysis;
* ``POST /v1/evaluate``: probabilities and equities of a batch of positions;
* ``POST /v1/action``: the bot's decision in a game state (opponent backends);
* ``/v1/games``: game and match sessions against the bot;
* ``GET /move``, ``GET /eval``: wildbg's routes, same query parameters and JSON shapes.

Errors: a malformed body or query gets 422 (shape) or 400 (meaning: board, ID, dice,
cube, score), an action the rules forbid 409 with the rule id, an unknown game 404, a
body over the limit 413; the JSON error body is ``{"error": "..."}`` (``{"message":
...}`` on the wildbg routes, as wildbg answers).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from nard_rl.cube import swap_sides
from nard_rl.engine.game import IllegalActionError
from nard_rl.engine.position import PositionError
from nard_rl.server.analysis import Analyzer, probs_dict
from nard_rl.server.batching import MicroBatcher
from nard_rl.server.config import ServerConfig
from nard_rl.server.models import (
    ActionRequest,
    ActionResponse,
    EvaluateRequest,
    HintRequest,
    HintResponse,
    MoveIn,
    NewGame,
    ResignIn,
    WildbgEvalResponse,
    WildbgMoveResponse,
)
from nard_rl.server.sessions import SessionError, SessionStore
from nard_rl.server.state import DecisionState, state_from_request


class JSONResponse(Response):
    """JSON rendered by orjson: the standard encoder took a tenth of a hint's server time."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


STATIC = Path(str(resources.files("nard_rl.server") / "static"))

WILDBG_PARAMS = {"die1", "die2", "x_away", "o_away", *(f"p{i}" for i in range(26))}


def _error(status: int, message: str, key: str = "error") -> JSONResponse:
    return JSONResponse({key: message}, status_code=status)


class Gate:
    """ASGI middleware: 413 for bodies over ``limit`` bytes, before anything parses them;
    counts the requests in progress for the micro-batcher."""

    def __init__(self, app: Any, limit: int, batcher: MicroBatcher) -> None:
        self.app = app
        self.limit = limit
        self.batcher = batcher

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.batcher.active += 1
        try:
            await self._limited(scope, receive, send)
        finally:
            self.batcher.active -= 1

    async def _limited(self, scope: dict, receive: Callable, send: Callable) -> None:
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    await _error(413, f"request body over {self.limit} bytes")(scope, receive, send)
                    return
        seen = 0

        async def limited() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _BodyTooLarge:
            await _error(413, f"request body over {self.limit} bytes")(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


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
    sessions = SessionStore(an, max_sessions=cfg.max_sessions)

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
                    an, cfg.gnubg_host, cfg.gnubg_external, batcher, log, ply=cfg.external_ply
                )
            try:
                yield
            finally:
                if gnubg is not None:
                    gnubg.close()
                await batcher.stop()

    app = FastAPI(
        title="nard-rl",
        version="0.1.0",
        description="Move and cube analysis, a bot opponent and game sessions for Nard "
        "(backgammon); wildbg-compatible /move and /eval.",
        lifespan=lifespan,
    )
    app.state.analyzer = an
    app.state.batcher = batcher
    app.state.sessions = sessions
    app.state.config = cfg
    batcher.active = 0
    app.add_middleware(Gate, limit=cfg.max_body_bytes, batcher=batcher)

    # errors ----------------------------------------------------------------------------------
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {err.get('msg', 'invalid')}")
        key = "message" if request.url.path in ("/move", "/eval") else "error"
        return JSONResponse({key: "; ".join(parts)[:2000]}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        key = "message" if request.url.path in ("/move", "/eval") else "error"
        return JSONResponse({key: str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(IllegalActionError)
    async def _illegal(request: Request, exc: IllegalActionError) -> JSONResponse:
        return _error(409, str(exc))

    @app.exception_handler(SessionError)
    async def _missing(request: Request, exc: SessionError) -> JSONResponse:
        return _error(404, str(exc.args[0]))

    @app.exception_handler(ValueError)
    async def _bad(request: Request, exc: ValueError) -> JSONResponse:
        key = "message" if request.url.path in ("/move", "/eval") else "error"
        return _error(400, str(exc) or type(exc).__name__, key)

    def parse(body: dict[str, Any]) -> DecisionState:
        return state_from_request(body, cfg.rules)

    async def rank(state: DecisionState, ply: int, top: int | None = None) -> dict[str, Any]:
        if ply == 0:
            plays = an.plays(state)
            probs = await batcher.submit(plays.afters, state.rules.name)
            return an.ranking(state, plays, probs, top)
        return await batcher.run_sync(an.rank, state, ply, top)  # type: ignore[return-value]

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        return await batcher.run_sync(fn, *args)

    # routes ----------------------------------------------------------------------------------
    @app.get("/health")
    async def health() -> dict[str, Any]:
        s = batcher.stats
        return {
            "status": "ok",
            "net": cfg.net,
            "ply": cfg.ply,
            "cube_ply": cfg.cube_ply,
            "cube_rollout": cfg.cube_rollout,
            "batches": s.batches,
            "batched_requests": s.requests,
            "largest_batch": s.largest,
        }

    @app.post("/v1/hint", response_model=HintResponse)
    async def hint(req: HintRequest) -> JSONResponse:
        """Every legal play ranked (with dice), or the cube analysis (without)."""
        state = parse(req.as_request())
        out: dict[str, Any] = {
            "position_id": state.position.position_id(),
            "board": list(state.position.board),
            "dice": list(state.dice) if state.dice else None,
        }
        if state.dice is None:
            out["cube"] = await run(an.cube_analysis, state, req.ply)
        else:
            ply = cfg.ply if req.ply is None else req.ply
            out.update(await rank(state, ply, req.top))
        return JSONResponse(out)

    @app.post("/v1/evaluate", response_model=None)
    async def evaluate(req: EvaluateRequest) -> JSONResponse:
        """Probabilities and equities of up to 512 positions, in one forward pass."""
        states = [parse(p.as_request()) for p in req.positions]
        boards = np.stack([s.position.array() for s in states])
        rules = {s.rules.name for s in states}
        out: list[dict[str, Any]] = [{} for _ in states]
        for name in rules:
            idx = [i for i, s in enumerate(states) if s.rules.name == name]
            rows = (
                boards[idx]
                if req.afterstate
                else np.stack([states[i].position.flip().array() for i in idx])
            )
            probs = await batcher.submit(np.ascontiguousarray(rows), name)
            if not req.afterstate:
                probs = swap_sides(probs)
            for j, i in enumerate(idx):
                utility, kind = an.utility(states[i])
                out[i] = {
                    "probs": probs_dict(probs[j]),
                    "equity": round(float(np.asarray(utility(probs[j][None, :]))[0]), 5),
                    "equity_kind": kind,
                }
        return JSONResponse({"afterstate": req.afterstate, "results": out})

    @app.post("/v1/action", response_model=ActionResponse)
    async def action(req: ActionRequest) -> JSONResponse:
        """The bot's decision; every field is from the bot's view."""
        body = req.as_request()
        for key in ("doubled", "resignation", "may_double", "ply"):
            body.pop(key, None)
        state = parse(body)
        ply = cfg.ply if req.ply is None else req.ply
        if state.dice is not None and not req.doubled and req.resignation is None and ply == 0:
            ranked = (await rank(state, ply, 1))["plays"]  # batched with other requests
            move, board = (
                (ranked[0]["move"], ranked[0]["board"])
                if ranked
                else ("", list(state.position.board))
            )
            return JSONResponse({"action": "move", "move": move, "board": board})
        answer = await run(
            lambda: an.action(
                state,
                doubled=req.doubled,
                resignation=req.resignation,
                may_double=req.may_double,
                ply=ply,
            )
        )
        return JSONResponse(answer)

    # sessions --------------------------------------------------------------------------------
    @app.post("/v1/games", status_code=201)
    async def new_game(req: NewGame) -> JSONResponse:
        """A game or match against the bot (the human is player 0)."""
        view = await run(sessions.create, req.rules, req.match_length, req.first, req.seed)
        return JSONResponse(view, status_code=201)

    @app.get("/v1/games/{game_id}")
    async def game_state(game_id: str) -> JSONResponse:
        return JSONResponse(await run(sessions.state, game_id))

    @app.delete("/v1/games/{game_id}", status_code=204)
    async def end_game(game_id: str) -> None:
        sessions.delete(game_id)

    def _simple(name: str) -> Callable[[str], Awaitable[JSONResponse]]:
        async def handler(game_id: str) -> JSONResponse:
            return JSONResponse(await run(sessions.act, game_id, name))

        handler.__name__ = f"game_{name}"
        handler.__doc__ = f"The human's '{name}'; then the bot acts until the human's turn."
        return handler

    for name in ("roll", "double", "take", "pass", "accept", "reject", "commit", "next"):
        app.post(f"/v1/games/{{game_id}}/{name}")(_simple(name))

    @app.post("/v1/games/{game_id}/move")
    async def game_move(game_id: str, req: MoveIn) -> JSONResponse:
        """Play (or, with commit false, stage) a move; a staged play can change (R38)."""
        return JSONResponse(
            await run(
                lambda: sessions.act(
                    game_id, "move", move=req.move, board=req.board, commit=req.commit
                )
            )
        )

    @app.post("/v1/games/{game_id}/resign")
    async def game_resign(game_id: str, req: ResignIn) -> JSONResponse:
        return JSONResponse(await run(lambda: sessions.act(game_id, "resign", kind=req.kind)))

    # wildbg ----------------------------------------------------------------------------------
    def wildbg_state(request: Request, with_dice: bool) -> DecisionState:
        q = request.query_params
        values: dict[str, int] = {}
        for key in WILDBG_PARAMS:
            if key not in q:
                continue
            text = q[key]
            try:
                values[key] = int(text)
            except ValueError:
                raise PositionError(f"{key} must be an integer, got {text!r}") from None
        board = [values.get(f"p{i}", 0) for i in range(26)]
        if any(not -15 <= v <= 15 for v in board):
            raise PositionError("p0..p25 must be in -15..15")
        body: dict[str, Any] = {"board": board}
        if with_dice:
            if "die1" not in values or "die2" not in values:
                raise PositionError("die1 and die2 are required")
            body["dice"] = [values["die1"], values["die2"]]
            for d in body["dice"]:
                if not 1 <= d <= 6:
                    raise PositionError("Dice values must be between 1 and 6.")
        if "x_away" in values or "o_away" in values:
            x, o = values.get("x_away"), values.get("o_away")
            if x is None or o is None or not (1 <= x <= 64 and 1 <= o <= 64):
                raise PositionError("x_away and o_away go together, each in 1..64")
            length = max(x, o)
            body["match"] = {"length": length, "score": [length - x, length - o]}
        return parse(body)

    def wildbg_probs(p: np.ndarray) -> dict[str, float]:
        return {
            "win": float(p[0]),
            "winG": float(p[1]),
            "winBg": float(p[2]),
            "loseG": float(p[3]),
            "loseBg": float(p[4]),
        }

    @app.get("/move", response_model=WildbgMoveResponse)
    async def wildbg_move(request: Request) -> JSONResponse:
        """wildbg's /move: every legal play, best first, from ``die1``, ``die2``,
        ``p0``..``p25`` (mover's view: p25 its bar, p0 minus the opponent's bar) and
        optional ``x_away``/``o_away``."""
        state = wildbg_state(request, True)
        plays = an.plays(state)
        if plays.afters.shape[0] == 0:
            probs = await batcher.submit(state.position.flip().array()[None, :], state.rules.name)
            p = swap_sides(probs)[0]  # no play: the position stays, the opponent rolls
            return JSONResponse({"moves": [{"play": [], "probabilities": wildbg_probs(p)}]})
        probs = await batcher.submit(plays.afters, state.rules.name)
        utility, _ = an.utility(state)
        eq = np.asarray(utility(probs))
        order = np.argsort(-eq, kind="stable")
        moves = []
        for i in order:
            steps = sorted(
                ((int(f), max(0, int(t))) for f, t in plays.steps[i] if f >= 0),
                key=lambda s: (-s[0], -s[1]),
            )
            moves.append(
                {
                    "play": [{"from": f, "to": t} for f, t in steps],
                    "probabilities": wildbg_probs(probs[i]),
                }
            )
        return JSONResponse({"moves": moves})

    @app.get("/eval", response_model=WildbgEvalResponse)
    async def wildbg_eval(request: Request) -> JSONResponse:
        """wildbg's /eval: probabilities of the side on roll before rolling and the cube
        action (``double``: the side on roll should double; ``accept``: the opponent
        should take)."""
        state = wildbg_state(request, False)
        analysis = await run(an.cube_analysis, state)
        p = [
            analysis["probs"][k]
            for k in ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
        ]
        return JSONResponse(
            {
                "cube": {
                    "double": analysis["decision"] in ("double_take", "double_pass"),
                    "accept": bool(analysis["take"]) if analysis["take"] is not None else True,
                },
                "probabilities": wildbg_probs(np.asarray(p)),
            }
        )

    # the web board ---------------------------------------------------------------------------
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    return app
