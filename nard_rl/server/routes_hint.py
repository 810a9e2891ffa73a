"""``POST /v1/hint``, ``/v1/evaluate`` and ``/v1/action``: analysis of one position, a
batch of positions, and the bot's decision for an opponent backend."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import APIRouter

from nard_rl.cube.model import swap_sides
from nard_rl.server.analysis import probs_dict
from nard_rl.server.models import (
    ActionRequest,
    ActionResponse,
    EvaluateRequest,
    HintRequest,
    HintResponse,
)
from nard_rl.server.services import JSONResponse, ServicesDep

router = APIRouter(tags=["analysis"])


@router.post("/v1/hint", response_model=HintResponse)
async def hint(req: HintRequest, svc: ServicesDep) -> JSONResponse:
    """Every legal play ranked (with dice), or the cube analysis (without)."""
    state = svc.parse(req.as_request())
    out: dict[str, Any] = {
        "position_id": state.position.position_id(),
        "board": list(state.position.board),
        "dice": list(state.dice) if state.dice else None,
    }
    if state.dice is None:
        ply = svc.check_ply(req.ply, svc.analyzer.cube_ply)
        out["cube"] = await svc.search.run(svc.analyzer.cube_analysis, state, ply)
    else:
        out.update(await svc.rank(state, svc.check_ply(req.ply), req.top))
    return JSONResponse(out)


@router.post("/v1/evaluate", response_model=None)
async def evaluate(req: EvaluateRequest, svc: ServicesDep) -> JSONResponse:
    """Probabilities and equities of up to 512 positions, in one forward pass."""
    an = svc.analyzer
    states = [svc.parse(p.as_request()) for p in req.positions]
    boards = np.stack([s.position.array() for s in states])
    out: list[dict[str, Any]] = [{} for _ in states]
    for name in {s.rules.name for s in states}:
        idx = [i for i, s in enumerate(states) if s.rules.name == name]
        rows = (
            boards[idx]
            if req.afterstate
            else np.stack([states[i].position.flip().array() for i in idx])
        )
        probs = await svc.batcher.submit(np.ascontiguousarray(rows), name)
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


@router.post("/v1/action", response_model=ActionResponse)
async def action(req: ActionRequest, svc: ServicesDep) -> JSONResponse:
    """The bot's decision; every field is from the bot's view."""
    body = req.as_request()
    for key in ("doubled", "resignation", "may_double", "ply"):
        body.pop(key, None)
    state = svc.parse(body)
    ply = svc.check_ply(req.ply)
    if state.dice is not None and not req.doubled and req.resignation is None and ply == 0:
        ranked = (await svc.rank(state, ply, 1))["plays"]  # batched with other requests
        move, board = (
            (ranked[0]["move"], ranked[0]["board"]) if ranked else ("", list(state.position.board))
        )
        return JSONResponse({"action": "move", "move": move, "board": board})
    answer = await svc.search.run(
        lambda: svc.analyzer.action(
            state,
            doubled=req.doubled,
            resignation=req.resignation,
            may_double=req.may_double,
            ply=ply,
        )
    )
    return JSONResponse(answer)
