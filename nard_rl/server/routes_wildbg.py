"""``GET /move`` and ``GET /eval``: wildbg's routes, same query parameters and JSON shapes
(errors as ``{"message": ...}``, as wildbg answers)."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import APIRouter, Request

from nard_rl.cube.model import swap_sides
from nard_rl.engine.position import PositionError
from nard_rl.server.models import WildbgEvalResponse, WildbgMoveResponse
from nard_rl.server.services import JSONResponse, Services, ServicesDep
from nard_rl.server.state import DecisionState

router = APIRouter(tags=["wildbg"])

WILDBG_PATHS = ("/move", "/eval")
"""Routes whose errors use wildbg's ``message`` key."""
WILDBG_PARAMS = {"die1", "die2", "x_away", "o_away", *(f"p{i}" for i in range(26))}


def wildbg_state(svc: Services, request: Request, with_dice: bool) -> DecisionState:
    q = request.query_params
    values: dict[str, int] = {}
    for key in WILDBG_PARAMS:
        if key not in q:
            continue
        text = q[key]
        try:
            if len(text) > 8:
                raise ValueError
            values[key] = int(text)
        except ValueError:
            raise PositionError(f"{key} must be an integer, got {text[:20]!r}") from None
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
    return svc.parse(body)


def wildbg_probs(p: np.ndarray) -> dict[str, float]:
    return {
        "win": float(p[0]),
        "winG": float(p[1]),
        "winBg": float(p[2]),
        "loseG": float(p[3]),
        "loseBg": float(p[4]),
    }


@router.get("/move", response_model=WildbgMoveResponse)
async def wildbg_move(request: Request, svc: ServicesDep) -> JSONResponse:
    """wildbg's /move: every legal play, best first, from ``die1``, ``die2``,
    ``p0``..``p25`` (mover's view: p25 its bar, p0 minus the opponent's bar) and
    optional ``x_away``/``o_away``."""
    an = svc.analyzer
    state = wildbg_state(svc, request, True)
    plays = an.plays(state)
    if plays.afters.shape[0] == 0:
        probs = await svc.batcher.submit(state.position.flip().array()[None, :], state.rules.name)
        p = swap_sides(probs)[0]  # no play: the position stays, the opponent rolls
        return JSONResponse({"moves": [{"play": [], "probabilities": wildbg_probs(p)}]})
    probs = await svc.batcher.submit(plays.afters, state.rules.name)
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


@router.get("/eval", response_model=WildbgEvalResponse)
async def wildbg_eval(request: Request, svc: ServicesDep) -> JSONResponse:
    """wildbg's /eval: probabilities of the side on roll before rolling and the cube
    action (``double``: the side on roll should double; ``accept``: the opponent
    should take)."""
    state = wildbg_state(svc, request, False)
    analysis = await svc.search.run(svc.analyzer.cube_analysis, state)
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
