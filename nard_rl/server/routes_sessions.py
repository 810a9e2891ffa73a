"""``/v1/games``: game and match sessions against the bot (``nard_rl.server.sessions``).

Session actions run on their own thread (``Services.session``), never behind the
searches of other requests, and each is stamped with the time it arrived, so a player on
the clock (R30, the mars rule set) is never charged for the server's work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request, Response

from nard_rl.server.models import MoveIn, NewGame, ResignIn
from nard_rl.server.services import JSONResponse, ServicesDep

router = APIRouter(prefix="/v1/games", tags=["sessions"])


def client_of(request: Request) -> str:
    """The client address a session quota is counted by."""
    return request.client.host if request.client is not None else "unknown"


@router.post("", status_code=201)
async def new_game(req: NewGame, request: Request, svc: ServicesDep) -> JSONResponse:
    """A game or match against the bot (the human is player 0)."""
    ply = None if req.ply is None else svc.check_ply(req.ply)  # the bot's, at most max_ply
    view = await svc.session.run(
        lambda: svc.sessions.create(
            req.rules, req.match_length, req.first, req.seed, client=client_of(request), ply=ply
        )
    )
    return JSONResponse(view, status_code=201)


@router.get("/{game_id}/record.mat")
async def game_record(game_id: str, svc: ServicesDep) -> Response:
    """The session's games as Jellyfish ``.mat`` text, to save or import elsewhere."""
    text = await svc.session.run(lambda: svc.sessions.record_mat(game_id))
    disposition = f'attachment; filename="nard-{game_id}.mat"'
    return Response(text, media_type="text/plain; charset=utf-8",
                    headers={"content-disposition": disposition})  # fmt: skip


@router.get("/{game_id}")
async def game_state(game_id: str, svc: ServicesDep) -> JSONResponse:
    at = svc.sessions.clock()  # arrival, on the games' time source
    return JSONResponse(await svc.session.run(lambda: svc.sessions.state(game_id, at=at)))


@router.delete("/{game_id}", status_code=204)
async def end_game(game_id: str, svc: ServicesDep) -> None:
    svc.sessions.delete(game_id)


def _simple(name: str) -> Callable[..., Awaitable[JSONResponse]]:
    async def handler(game_id: str, svc: ServicesDep) -> JSONResponse:
        at = svc.sessions.clock()
        return JSONResponse(await svc.session.run(lambda: svc.sessions.act(game_id, name, at=at)))

    handler.__name__ = f"game_{name}"
    handler.__doc__ = f"The human's '{name}'; then the bot acts until the human's turn."
    return handler


for _name in ("roll", "double", "take", "pass", "accept", "reject", "commit", "next"):
    router.post(f"/{{game_id}}/{_name}")(_simple(_name))


@router.post("/{game_id}/move")
async def game_move(game_id: str, req: MoveIn, svc: ServicesDep) -> JSONResponse:
    """Play (or, with commit false, stage) a move; a staged play can change (R38)."""
    at = svc.sessions.clock()
    return JSONResponse(
        await svc.session.run(
            lambda: svc.sessions.act(
                game_id, "move", move=req.move, board=req.board, commit=req.commit, at=at
            )
        )
    )


@router.post("/{game_id}/resign")
async def game_resign(game_id: str, req: ResignIn, svc: ServicesDep) -> JSONResponse:
    at = svc.sessions.clock()
    return JSONResponse(
        await svc.session.run(lambda: svc.sessions.act(game_id, "resign", kind=req.kind, at=at))
    )
