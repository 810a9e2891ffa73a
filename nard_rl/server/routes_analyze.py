"""``POST /v1/analyze``: a whole match file analysed (``nard_rl.analysis``), the JSON of
``nard analyze --json`` back.

The body is the file itself (``.sgf`` or ``.mat`` text, any content type), or a JSON
object ``{"match": "<file text>", "ply": N}``; ``?ply=N`` also sets the lookahead
(default: the server's ``ply``, at most its ``max_ply``).  ``POST
/v1/games/{id}/analysis`` analyses a game session against the bot the same way.  A body over
``MAX_MATCH_BYTES`` gets 413, a file that cannot be read or replayed 400 with the
reader's message (game, move number and text).  The analysis runs on the search queue,
one at a time, with its own search caches (``MatchAnalyser``) over the server's
evaluator.  ``POST /v1/analyze/chart`` draws the winning-chance chart of an analysis
(PNG), ``GET /analysis`` is the web page that uses both.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from nard_rl.server.routes_health import STATIC
from nard_rl.server.services import JSONResponse, ServicesDep, error_response

MAX_MATCH_BYTES = 256 * 1024
"""Largest match file accepted: a 25-point match in ``.mat`` is about 60 KB."""

router = APIRouter(tags=["analysis"])


def _analyser(svc: Any, cache: dict[tuple[str, int], Any], rules: str, ply: int) -> Any:
    """The match analyser of a rule set and ply, built once over the server's evaluator."""
    from nard_rl.analysis.core import MatchAnalyser, Settings

    analyser = cache.get((rules, ply))
    if analyser is None:
        analyser = MatchAnalyser(svc.analyzer.evaluator(rules), Settings(ply))
        cache[rules, ply] = analyser
    return analyser


def _analyse(svc: Any, cache: dict[tuple[str, int], Any], text: str, ply: int) -> dict[str, Any]:
    from nard_rl.analysis.core import analyse
    from nard_rl.records import parse_match, replay

    match = replay(parse_match(text, "upload"))
    return analyse(match, _analyser(svc, cache, "standard", ply), net=svc.config.net).to_dict()


def _cache(request: Request) -> dict[tuple[str, int], Any]:
    cache = getattr(request.app.state, "match_analysers", None)
    if cache is None:
        cache = {}
        request.app.state.match_analysers = cache
    return cache


@router.post("/v1/analyze", response_model=None)
async def analyze(request: Request, svc: ServicesDep, ply: int | None = None) -> JSONResponse:
    """Analyse a ``.sgf`` or ``.mat`` match file: per-player error rates, luck and
    rating, and every decision with its equity lost and mark (mEMG)."""
    body = await request.body()
    if len(body) > MAX_MATCH_BYTES:
        return error_response(413, f"match file over {MAX_MATCH_BYTES} bytes")
    if not body.strip():
        raise ValueError("the body is empty: send the .sgf or .mat file as the body")
    text = body.decode("utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            request_json = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the body is not valid JSON ({exc})") from None
        if not isinstance(request_json, dict) or not isinstance(request_json.get("match"), str):
            raise ValueError('a JSON body must be {"match": "<the .sgf or .mat text>"}')
        text = request_json["match"]
        if ply is None and request_json.get("ply") is not None:
            ply = request_json["ply"]
    if ply is not None and (isinstance(ply, bool) or not isinstance(ply, int) or ply < 0):
        raise ValueError(f'"ply" must be an integer >= 0, got {ply!r}')
    depth = svc.check_ply(ply)
    result = await svc.search.run(_analyse, svc, _cache(request), text, depth)
    return JSONResponse(result)


@router.post("/v1/games/{game_id}/analysis", response_model=None)
async def analyze_session(
    game_id: str, request: Request, svc: ServicesDep, ply: int | None = None
) -> JSONResponse:
    """The analysis of a game session against the bot (its games so far, the one in
    progress up to where it stands), as ``/v1/analyze`` gives it; the players are
    ``human`` and ``bot``."""
    from nard_rl.engine.game import Game
    from nard_rl.records import from_games
    from nard_rl.server.sessions import NAMES

    depth = svc.check_ply(ply)
    session = svc.sessions.get(game_id)
    with session.lock:  # a snapshot: the session may move on while the analysis runs
        length = session.match.length
        games = [
            Game.replay(
                list(g.record), rules=g.rules, match_length=g.match_length, crawford=g.crawford
            )
            for g in session.match.games
        ]
    rules = session.match.rules.name

    def run() -> dict[str, Any]:
        from nard_rl.analysis.core import analyse

        match = from_games(games, length, (NAMES[0], NAMES[1]))
        analyser = _analyser(svc, _cache(request), rules, depth)
        return analyse(match, analyser, net=svc.config.net).to_dict()

    return JSONResponse(await svc.search.run(run))


@router.post("/v1/analyze/chart", response_model=None)
async def analyze_chart(request: Request, svc: ServicesDep) -> Response:
    """The winning-chance chart (PNG, matplotlib) of an analysis that ``/v1/analyze``
    returned, posted back as it came: what the web board shows."""
    from nard_rl.analysis.report import chart_png

    body = await request.body()
    if len(body) > 4 * MAX_MATCH_BYTES:
        return error_response(413, f"analysis over {4 * MAX_MATCH_BYTES} bytes")
    try:
        result = json.loads(body)
        names = result["names"]
        timeline = result["timeline"]
        if not (isinstance(names, list) and len(names) == 2 and isinstance(timeline, list)):
            raise TypeError
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError("expected the JSON object /v1/analyze returned") from None

    def draw() -> bytes:
        try:
            return chart_png(result)
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not an analysis from /v1/analyze: {exc!r}") from None

    return Response(await svc.search.run(draw), media_type="image/png")


@router.get("/analysis", include_in_schema=False)
async def analysis_page() -> FileResponse:
    """The match-analysis page of the web board (upload, decisions, chart, rollout)."""
    return FileResponse(STATIC / "analysis.html")
