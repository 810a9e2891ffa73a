"""JSON-lines front end: ``nard hint --jsonl`` answers one JSON object per line.

Each request carries the fields of ``nard_rl.server.state`` (position, dice, cube, match,
rules) plus optional ``"ply"`` and ``"top"``; the answer has the shape of ``POST
/v1/hint``: ``{"plays": [...]}`` with dice, ``{"cube": {...}}`` without.  A line that
cannot be answered gets ``{"error": "..."}`` naming the problem, and the stream goes on.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from nard_rl.server.analysis import Analyzer, check_ply
from nard_rl.server.state import state_from_request

_EXTRA = ("ply", "top")


def hint_answer(
    analyzer: Analyzer, request: Any, default_rules: str = "standard", top: int | None = None
) -> dict[str, Any]:
    """The answer to one parsed request (raises ``ValueError`` naming the problem)."""
    if not isinstance(request, dict):
        raise ValueError("each line must be a JSON object")
    ply = request.get("ply")
    ply = analyzer.ply if ply is None else check_ply(ply)
    n = request.get("top", top)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f'"top" must be a positive integer, got {n!r}')
    state = state_from_request({k: v for k, v in request.items() if k not in _EXTRA}, default_rules)
    out: dict[str, Any] = {
        "position_id": state.position.position_id(),
        "dice": list(state.dice) if state.dice else None,
    }
    if state.dice is None:
        out["cube"] = analyzer.cube_analysis(state, request.get("ply"))
    else:
        out.update(analyzer.rank(state, ply, n))
    return out


def hint_line(
    analyzer: Analyzer, line: str, default_rules: str = "standard", top: int | None = None
) -> dict[str, Any]:
    """One request line to its answer; every failure becomes ``{"error": ...}``."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"error": f"the line is not valid JSON: {exc}"}
    try:
        return hint_answer(analyzer, request, default_rules, top)
    except (ValueError, KeyError, TypeError) as exc:
        return {"error": str(exc) or type(exc).__name__}


def serve_hint_lines(
    stdin: TextIO,
    stdout: TextIO,
    analyzer: Analyzer,
    default_rules: str = "standard",
    top: int | None = None,
) -> None:
    """Answer until stdin closes, one flushed line per non-empty request line."""
    for line in stdin:
        if not line.strip():
            continue
        answer = hint_line(analyzer, line, default_rules, top)
        stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        stdout.flush()
