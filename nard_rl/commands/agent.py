"""``nard agent``: an engine mode that answers one chosen play per JSON line.

Other programs (GUIs, match servers, test harnesses) drive a player through stdin and
stdout, so any player spec (``random``, ``pubeval``, ``gnubg:2``, a checkpoint, ...) can
take a seat without Python bindings.  Protocol, one JSON object a line each way:

* request: ``{"board": [26 ints], "dice": [d1, d2]}``, the board seen by the side on
  roll (``"position_id"`` or ``"xgid"`` may replace ``"board"``; an optional
  ``"rules"``: ``standard`` or ``mars`` overrides ``--rules`` for that line);
* answer: ``{"move": "24/18 13/11", "board": [26 ints]}``: the chosen play's notation and
  the resulting board, still from the mover's view (flip it to hand over the turn);
* optional ``"cube": {"value", "owner"}`` (owner ``centered``/``mover``/``opponent``),
  ``"match": {"length", "score": [mover, opponent], "crawford"}`` (length 0: money) and
  ``"jacoby"``: the play is then chosen for that cube and score
  (``nard_rl.cube.model.score_utility``: match-winning chances in a match, money equity at the
  stake with Jacoby where on) by players with outcome probabilities (nets, searches);
* a roll with no legal play (R16) answers ``{"move": "", "board": <unchanged>}``;
* cube questions (network players): without ``"dice"`` the answer is ``{"action":
  "double"}`` or ``{"action": "roll"}`` (with the cube analysis); ``"doubled": true``
  (the opponent, on roll, has doubled) gets ``take`` or ``pass``; ``"resignation":
  "single" | "gammon" | "backgammon"`` gets ``accept`` or ``reject``, the same as the
  server's ``POST /v1/action``;
* a line that cannot be answered gets ``{"error": "..."}`` and the stream goes on,
  whatever it holds (invalid UTF-8, JSON nested a thousand deep, an integer of thousands
  of digits: ``nard_rl.server.jsonl``).

Every answer is flushed at once; the agent runs until stdin closes.  A failure of the
player itself (a ``RuntimeError`` or ``OSError``: gnubg died, a net answered nonsense) is
not the line's fault: the player is rebuilt from its spec and the line asked again; if
the rebuilt player fails too, the agent says so on stderr and exits with status 1 rather
than answering every later line with the same error.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from nard_rl.commands.common import (
    cube_and_match_from_request,
    dice_from_request,
    position_from_request,
)
from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.movetext import format_steps
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.players.base import Player, make_player, parse_player_spec
from nard_rl.server.jsonl import serve_lines

NAME = "agent"
HELP = "Engine mode: read {board, dice} JSON lines on stdin, answer each with a chosen play."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--player",
        default="default",
        help="player spec: random, pubeval, gnubg, gnubg:PLY, default (the shipped net) "
        "or a checkpoint path ending in .pt, either with :PLY to search 0-3 plies deep "
        "(default:1) (default: %(default)s)",
    )
    parser.add_argument("--rules", default="standard", help="rule set: standard or mars")
    parser.add_argument("--seed", type=int, default=None, help="seed for random players")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads for network players (default: %(default)s; one position at a "
        "time is too small a batch to gain from more, and spinning threads cost latency)",
    )


def answer_request(request: dict[str, Any], player: Player, rules: RuleSet) -> dict[str, Any]:
    """The chosen play for one parsed request (see the module docstring)."""
    if request.get("dice") is None or request.get("doubled") or request.get("resignation"):
        from nard_rl.server.lines import agent_decision  # a cube or resignation question

        return agent_decision(request, player, rules)
    position = position_from_request(request)
    d1, d2 = dice_from_request(request)
    name = request.get("rules")
    if name is not None and not isinstance(name, str):
        raise ValueError(f'"rules" must be "standard" or "mars", got {type(name).__name__}')
    ruleset = get_rules(name) if name is not None else rules
    board = np.array(position.board, dtype=np.int8)
    afters, steps = legal_afterstates(board, d1, d2, ruleset.waste_rule)
    if afters.shape[0] == 0:
        return {"move": "", "board": list(position.board)}
    dice = np.array([d1, d2], dtype=np.int8)
    if any(k in request for k in ("cube", "match", "jacoby")):
        from nard_rl.cube.cubeful import score_aware_choice
        from nard_rl.cube.model import score_utility

        cube, match, jacoby = cube_and_match_from_request(request)
        utility = score_utility(ruleset.with_options(jacoby=jacoby), cube, match)
        offsets = np.array([0, afters.shape[0]], dtype=np.int64)
        pick = int(
            score_aware_choice(player, board[None], dice[None], afters, offsets, [utility])[0]
        )
    else:
        pick = player.choose(board, dice, afters)
    if not 0 <= pick < afters.shape[0]:
        raise RuntimeError(f"player {player.name} chose play {pick} of {afters.shape[0]}")
    return {"move": format_steps(position.board, steps[pick]), "board": afters[pick].tolist()}


BACKEND_ERRORS = (RuntimeError, OSError)
"""Failures of the player rather than of the request line (module docstring)."""


EXPECTED = (
    'a JSON object with "board" (26 integers, the mover\'s view), "position_id" or "xgid", '
    'and "dice" ([d1, d2]), or a cube question (no "dice", "doubled" or "resignation")'
)
"""What a request line must be (said in every error about its shape)."""


def answer_line(line: str, player: Player, rules: RuleSet) -> dict[str, Any]:
    """One request line to its answer; a malformed or illegal request becomes
    ``{"error": ...}``.  Player failures (``BACKEND_ERRORS``) propagate."""
    out = io.StringIO()
    answer = lambda r: answer_request(r, player, rules)  # noqa: E731
    serve_lines(io.StringIO(line), out, answer, EXPECTED, fatal=BACKEND_ERRORS)
    text = out.getvalue()
    return json.loads(text) if text else {"error": f"the line is empty; expected {EXPECTED}"}


class BackendFailed(Exception):
    """The player failed, and failed again after a restart."""


def serve(
    stdin: IO[Any],
    stdout: IO[str],
    player: Player,
    rules: RuleSet,
    restart: Callable[[], Player] | None = None,
) -> Player:
    """Answer lines until stdin closes; returns the player in use at the end (a restart
    replaces it).  Every line gets an answer (``nard_rl.server.jsonl``); a failure of the
    player itself restarts it once through ``restart`` and retries the line; a second
    failure (or no ``restart``) raises ``BackendFailed``."""
    current = player

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal current
        try:
            return answer_request(request, current, rules)
        except RecursionError:
            raise  # the request's fault (it nests too deeply), answered as an error
        except BACKEND_ERRORS as exc:
            if restart is None:
                raise BackendFailed(f"the player failed: {exc}") from exc
            current.close()
            try:
                current = restart()
                return answer_request(request, current, rules)
            except RecursionError:
                raise
            except BACKEND_ERRORS as again:
                raise BackendFailed(
                    f"the player failed ({exc}) and again after a restart ({again})"
                ) from again

    serve_lines(stdin, stdout, answer, EXPECTED, fatal=(BackendFailed,))
    return current


def run(args: argparse.Namespace) -> int:
    try:
        rules = get_rules(args.rules)
        if args.threads > 0 and parse_player_spec(args.player).is_network:
            import torch

            torch.set_num_threads(args.threads)
        player = make_player(args.player, rules=rules, seed=args.seed)
    except (ValueError, RuntimeError, OSError) as exc:
        print(f"nard agent: error: {exc}", file=sys.stderr)
        return 2

    def restart() -> Player:
        print(f"nard agent: restarting player {args.player!r} after a failure", file=sys.stderr)
        return make_player(args.player, rules=rules, seed=args.seed)

    try:
        player = serve(sys.stdin, sys.stdout, player, rules, restart)
    except BackendFailed as exc:
        print(f"nard agent: error: {exc}; exiting", file=sys.stderr)
        return 1
    finally:
        player.close()
    return 0
