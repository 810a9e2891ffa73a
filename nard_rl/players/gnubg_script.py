"""Request loop that runs INSIDE GNU Backgammon (``gnubg -t -q -r -p gnubg_script.py``).

Never imported by nard_rl itself: ``nard_rl.players.gnubg_player`` starts gnubg on this
file.  gnubg prints freely to its stdout, so requests and answers travel as JSON lines
over two extra pipe descriptors named in ``NARD_GNUBG_FDS`` ("READ_FD,WRITE_FD").

Boards arrive in the JSON board format (26 ints, the side on roll positive).  Requests:

* ``{"op": "best", "plies": N, "boards": [...], "dice": [[d1, d2], ...]}`` ->
  ``{"moves": [[from, to, ...8 ints], ...]}``: gnubg's chosen play per position, as
  per-die steps in the mover's numbering (25 = bar, 0 = off; unused pairs are 0, 0);
  an optional ``"cubes"`` list (the ``cube`` op's rows) plays each for its cube and score,
  cubefully, as gnubg's own player does.
* ``{"op": "evaluate", "plies": N, "boards": [...]}`` -> ``{"equities": [...]}``:
  cubeless money equity for the side on roll of each board.
* ``{"op": "probabilities", "plies": N, "boards": [...]}`` -> ``{"probs": [[win,
  win_gammon, win_backgammon, lose_gammon, lose_backgammon], ...]}``: gnubg's cubeless
  outcome probabilities for the side on roll (a gammon counts as a win too).
* ``{"op": "cube", "plies": N, "boards": [...], "cubes": [[value, owner, length,
  score_me, score_opp, crawford], ...]}`` -> ``{"cube": [[optimal, no_double,
  double_take, double_pass], ...]}``: gnubg's cubeful cube analysis for the side on roll
  (owner 1: the side on roll, 0: the opponent, -1: centered; length 0 for money),
  equities normalised to the cube.
* ``{"op": "quit"}`` ends the loop.

A failed request is answered ``{"error": "..."}`` and the loop goes on.
"""

from __future__ import annotations

import json
import os
from typing import Any


def to_gnubg_board(board: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """JSON board -> gnubg's pair (side not on roll, side on roll), each listing its own
    points 1..24 and then its bar."""
    mover = (*(max(board[i + 1], 0) for i in range(24)), board[25])
    other = (*(max(-board[24 - i], 0) for i in range(24)), -board[0])
    return other, mover


def _context(plies: int) -> dict[str, Any]:
    return {"cubeful": 0, "plies": int(plies), "deterministic": 1, "noise": 0.0}


def _cube_info(gnubg: Any, spec: list[int]) -> Any:
    """gnubg's cube info for ``[value, owner, length, score_me, score_opp, crawford]``."""
    value, owner, length, me, opp, crawford = (int(v) for v in spec)
    # the side on roll is gnubg's player 1: scores are listed (player 0, player 1)
    return gnubg.cubeinfo(value, owner, 1, length, (opp, me), crawford, 0)


def _handle(gnubg: Any, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    cube = gnubg.cubeinfo()
    if op == "best":
        # with a cube, gnubg's own player chooses cubeful plays (its default evaluation
        # setting), which at a match score differ from cubeless ones; so must its stand-in
        cubeless, cubeful = _context(request["plies"]), dict(_context(request["plies"]), cubeful=1)
        specs = request.get("cubes") or [None] * len(request["boards"])
        moves = []
        for board, (d1, d2), spec in zip(request["boards"], request["dice"], specs, strict=True):
            gnubg.command(f"set dice {int(d1)} {int(d2)}")
            info, context = (cube, cubeless) if spec is None else (_cube_info(gnubg, spec), cubeful)
            moves.append(list(gnubg.findbestmove(to_gnubg_board(board), info, context)))
        return {"moves": moves}
    if op == "probabilities":
        context = _context(request["plies"])
        return {
            "probs": [
                [float(v) for v in gnubg.evaluate(to_gnubg_board(b), cube, context)[:5]]
                for b in request["boards"]
            ]
        }
    if op == "evaluate":
        context = _context(request["plies"])
        return {
            "equities": [
                float(gnubg.evaluate(to_gnubg_board(b), cube, context)[5])
                for b in request["boards"]
            ]
        }
    if op == "cube":
        context = dict(_context(request["plies"]), cubeful=1)
        out = []
        for board, spec in zip(request["boards"], request["cubes"], strict=True):
            info = _cube_info(gnubg, spec)
            analysis = gnubg.cfevaluate(to_gnubg_board(board), info, context)
            out.append([float(v) for v in analysis[:4]])
        return {"cube": out}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    import gnubg  # only exists inside GNU Backgammon

    read_fd, write_fd = (int(x) for x in os.environ["NARD_GNUBG_FDS"].split(","))
    threads = int(os.environ.get("NARD_GNUBG_THREADS", "1"))
    for command in (
        f"set threads {threads}",
        "set jacoby off",
        "set player 0 human",
        "set player 1 human",
        "new game",
    ):
        gnubg.command(command)
    with os.fdopen(read_fd, "r") as requests, os.fdopen(write_fd, "w") as answers:
        answers.write(json.dumps({"ready": True}) + "\n")
        answers.flush()
        for line in requests:
            try:
                request = json.loads(line)
                if request.get("op") == "quit":
                    break
                answer = _handle(gnubg, request)
            except Exception as exc:  # report every failure to the caller, keep serving
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            answers.write(json.dumps(answer, separators=(",", ":")) + "\n")
            answers.flush()


if __name__ == "__main__":
    main()
