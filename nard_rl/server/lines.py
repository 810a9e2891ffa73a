"""JSON-lines front ends: ``nard hint --jsonl`` and the cube questions of ``nard agent``.

Each request carries the fields of ``nard_rl.server.state`` (position, dice, cube, match,
rules) plus optional ``"ply"`` and ``"top"``; the answer has the shape of ``POST
/v1/hint``: ``{"plays": [...]}`` with dice, ``{"cube": {...}}`` without.  A line that
cannot be answered gets ``{"error": "..."}`` naming the problem, and the stream goes on.
"""

from __future__ import annotations

from typing import IO, Any

from nard_rl.server.analysis import Analyzer, check_ply
from nard_rl.server.jsonl import serve_lines, shown
from nard_rl.server.state import HINT_EXPECTED, state_from_request

_EXTRA = ("ply", "top")


def hint_answer(
    analyzer: Analyzer, request: Any, default_rules: str = "standard", top: int | None = None
) -> dict[str, Any]:
    """The answer to one parsed request (raises ``ValueError`` naming the problem)."""
    if not isinstance(request, dict):
        raise ValueError(f"expected {HINT_EXPECTED}")
    ply = request.get("ply")
    ply = analyzer.ply if ply is None else check_ply(ply)
    n = request.get("top", top)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f'"top" must be a positive integer, got {shown(n)}')
    state = state_from_request({k: v for k, v in request.items() if k not in _EXTRA}, default_rules)
    out: dict[str, Any] = {
        "position_id": state.position.position_id(),
        "board": list(state.position.board),
        "dice": list(state.dice) if state.dice else None,
    }
    if state.dice is None:
        out["cube"] = analyzer.cube_analysis(state, request.get("ply"))
    else:
        out.update(analyzer.rank(state, ply, n))
    return out


def serve_hint_lines(
    stdin: IO[Any],
    stdout: IO[str],
    analyzer: Analyzer,
    default_rules: str = "standard",
    top: int | None = None,
) -> None:
    """Answer until stdin closes, one flushed line per non-empty request line
    (``nard_rl.server.jsonl``: whatever a line holds, it gets an answer)."""
    serve_lines(
        stdin, stdout, lambda r: hint_answer(analyzer, r, default_rules, top), HINT_EXPECTED
    )


_AGENT_ANALYZERS: dict[int, Analyzer] = {}


def player_evaluator(player: object) -> Any:
    """The evaluator behind a network or search player (None for other players)."""
    for obj in (player, getattr(player, "search", None)):
        ev = getattr(obj, "evaluator", None)
        if ev is not None and hasattr(ev, "probabilities"):
            return ev
    return None


def agent_decision(request: dict[str, Any], player: object, rules: Any) -> dict[str, Any]:
    """``nard agent``'s answer to a cube or resignation question (no ``"dice"``, or
    ``"doubled": true``, or ``"resignation"``), with ``/v1/action``'s meaning: the board,
    cube and score are from the agent's view; ``"doubled"``: the opponent (on roll) has
    doubled; ``"resignation"``: the opponent offers ``single``/``gammon``/``backgammon``;
    ``"may_double"``: false when the agent may only roll.  Answers ``{"action": ...}``."""
    evaluator = player_evaluator(player)
    if evaluator is None:
        raise ValueError(
            f"player {getattr(player, 'name', player)!r} has no outcome probabilities: "
            "cube questions need a network player (default, a checkpoint, PATH.pt:PLY)"
        )
    analyzer = _AGENT_ANALYZERS.get(id(player))
    if analyzer is None:
        analyzer = Analyzer(evaluator=evaluator)
        _AGENT_ANALYZERS[id(player)] = analyzer
    extra = {k: request.get(k) for k in ("doubled", "resignation", "may_double")}
    body = {k: v for k, v in request.items() if k not in extra}
    doubled, may_double = extra["doubled"] or False, extra["may_double"]
    if not isinstance(doubled, bool) or not isinstance(may_double, (bool, type(None))):
        raise ValueError('"doubled" and "may_double" must be true or false')
    state = state_from_request(body, getattr(rules, "name", rules))
    return analyzer.action(
        state,
        doubled=doubled,
        resignation=extra["resignation"],
        may_double=True if may_double is None else may_double,
    )
