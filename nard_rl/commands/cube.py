"""``nard cube``: the network's cube action for a position before the roll (money or match)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from nard_rl.commands.common import (
    add_cube_arguments,
    add_position_arguments,
    checkpoint_errors,
    cube_and_match_from_request,
    match_from_args,
    position_from_args,
    position_from_request,
)
from nard_rl.cube.met import MatchScore
from nard_rl.cube.model import (
    PROB_NAMES,
    CubeDecision,
    CubeState,
)
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import get_rules
from nard_rl.server.jsonl import serve_lines

if TYPE_CHECKING:  # nard_rl.cube.cubeful imports torch: only inside the functions that need it
    from nard_rl.cube.cubeful import CubeAdvisor

NAME = "cube"
HELP = "The cube action (no double, double/take, double/pass, too good) with a network."

_PHRASES = {
    "no_double": "No double",
    "double_take": "Double",
    "double_pass": "Double",
    "too_good": "Too good to double",
    "unavailable": "Doubling not available",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from nard_rl.cube.cubeful import DEFAULT_CUBE_PLY, DEFAULT_CUBE_ROLLOUT, DEFAULT_REFINE_MARGIN

    add_position_arguments(parser)
    add_cube_arguments(parser)
    parser.add_argument("--net", default="default", help="checkpoint path or 'default'")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--ply",
        type=int,
        default=DEFAULT_CUBE_PLY,
        help=f"lookahead of the pre-roll probabilities: 0, 1 or 2 (default {DEFAULT_CUBE_PLY})",
    )
    parser.add_argument(
        "--refine",
        type=float,
        default=DEFAULT_REFINE_MARGIN,
        help="read decisions this close to a boundary one ply deeper, up to 2-ply "
        f"(default {DEFAULT_REFINE_MARGIN}; 0: off)",
    )
    parser.add_argument(
        "--rollout",
        type=int,
        default=DEFAULT_CUBE_ROLLOUT,
        metavar="TRIALS",
        help="also roll out the close decisions, this many games each, and blend the "
        f"rollout into their probabilities (default {DEFAULT_CUBE_ROLLOUT}; 0: off)",
    )
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help='read {"board" | "position_id", "cube", "match", "jacoby"} lines on stdin',
    )


def load_advisor(
    net: str = "default",
    ply: int | None = None,
    refine: float | None = None,
    rollout: int | None = None,
) -> CubeAdvisor:
    """The cube advisor of a checkpoint (``default``: the shipped net) at ``ply``, close
    decisions read one ply deeper (``refine``: the margin, 0 for off) and rolled out
    (``rollout``: games per close decision, 0 for off; with ``refine`` 0 no decision
    is close).  ``None`` takes ``nard_rl.cube.cubeful``'s default for each."""
    from nard_rl.cube import cubeful
    from nard_rl.nets.evaluator import load_evaluator

    with checkpoint_errors(net):
        evaluator = load_evaluator(net)
    return cubeful.CubeAdvisor(
        evaluator,
        ply=cubeful.DEFAULT_CUBE_PLY if ply is None else ply,
        refine_margin=cubeful.DEFAULT_REFINE_MARGIN if refine is None else refine,
        rollout_trials=cubeful.DEFAULT_CUBE_ROLLOUT if rollout is None else rollout,
    )


def evaluate(
    position: Position,
    cube: CubeState,
    match: MatchScore | None,
    advisor: CubeAdvisor,
    *,
    jacoby: bool = False,
) -> tuple[np.ndarray, CubeDecision, int]:
    """The advisor's pre-roll probabilities, the cube decision built on them and the ply
    they were read at."""
    if position.winner() is not None:
        raise PositionError("the game is over: there is no cube decision")
    rules = get_rules("standard").with_options(jacoby=jacoby)
    probs, decisions, plies = advisor.analyse_batch(
        position.array()[None, :], [cube], [match], rules=rules
    )
    return probs[0], decisions[0], int(plies[0])


# --------------------------------------------------------------------------------------
# --jsonl: the fields of the shared cube reference file


def request_state(request: dict[str, Any]) -> tuple[Position, CubeState, MatchScore | None, bool]:
    """Position, cube, match score and Jacoby switch of one ``--jsonl`` request."""
    position = position_from_request(request)
    rules = request.get("rules", "standard")
    if rules != "standard":
        raise ValueError(f'"rules" must be "standard" (the cube needs it, R28), got {rules!r}')
    return (position, *cube_and_match_from_request(request))


def answer(decision: CubeDecision, probs: np.ndarray) -> dict[str, Any]:
    """One answer line: the reference file's field names (equities normalised to the
    current cube, from the player on roll's view)."""
    return {
        "decision": decision.decision,
        "take": decision.take,
        "equities": {
            "no_double": decision.no_double,
            "double_take": decision.double_take,
            "double_pass": decision.double_pass,
            "optimal": decision.optimal,
        },
        "equity_cubeless": decision.cubeless,
        "probs": {k: float(v) for k, v in zip(PROB_NAMES, probs, strict=True)},
        "x": decision.x,
    }


EXPECTED = (
    'a JSON object with "board" (26 integers, the mover\'s view), "position_id" or "xgid", '
    'and optional "cube", "match" and "jacoby"'
)
"""What a ``--jsonl`` line must be (said in every error about its shape)."""


def answer_request(request: dict[str, Any], advisor: CubeAdvisor) -> dict[str, Any]:
    """The answer to one parsed request (``ValueError`` names what is wrong)."""
    position, cube, match, jacoby = request_state(request)
    probs, decision, ply = evaluate(position, cube, match, advisor, jacoby=jacoby)
    games = rolled_out(advisor, position, ply)
    return {**answer(decision, probs), "ply": ply, "rollout": games}


def rolled_out(advisor: CubeAdvisor, position: Position, ply: int) -> int:
    """Games rolled out behind the decision on ``position`` read at ``ply`` (0: none):
    the advisor rolls out the close decisions (those it read deeper than its own ply)
    that have contact (``CubeAdvisor.rolls_out``)."""
    if ply <= advisor.ply or not advisor.rolls_out(position.array())[0]:
        return 0
    return advisor.rollout_trials


def serve_jsonl(stdin: IO[Any], stdout: IO[str], advisor: CubeAdvisor) -> None:
    """Answer request lines until stdin closes; every line gets one answer line."""
    serve_lines(stdin, stdout, lambda request: answer_request(request, advisor), EXPECTED)


def _describe(cube: CubeState, match: MatchScore | None) -> str:
    where = "money game"
    if match is not None:
        where = f"{match.length}-point match, score {match.score_me}-{match.score_opp}"
        if match.crawford:
            where += " (Crawford game)"
        elif match.post_crawford:
            where += " (post-Crawford)"
    owner = {"centered": "centered", "mover": "owned by the player on roll"}.get(
        cube.owner, "owned by the opponent"
    )
    return f"{where}, cube {cube.value} {owner}"


def run(args: argparse.Namespace) -> int:
    try:
        advisor = load_advisor(args.net, args.ply, args.refine, args.rollout)
        if args.jsonl:
            serve_jsonl(sys.stdin, sys.stdout, advisor)
            return 0
        position = position_from_args(args)
        cube = CubeState(args.cube, args.owner)
        match = match_from_args(args)
        probs, decision, ply = evaluate(position, cube, match, advisor, jacoby=args.jacoby)
    except (ValueError, OSError) as exc:
        print(f"nard cube: error: {exc}", file=sys.stderr)
        return 2
    prob_dict = {k: round(float(v), 4) for k, v in zip(PROB_NAMES, probs, strict=True)}
    if args.json:
        out = {
            "position_id": position.position_id(),
            "board": list(position.board),
            "cube": {"value": cube.value, "owner": cube.owner},
            "match": None
            if match is None
            else {
                "length": match.length,
                "score": [match.score_me, match.score_opp],
                "crawford": match.crawford,
            },
            "probs": prob_dict,
            "ply": ply,
            "rollout": rolled_out(advisor, position, ply),
            **decision.to_dict(),
        }
        print(json.dumps(out))
        return 0
    print(f"Position ID {position.position_id()}: {_describe(cube, match)}")
    pr = prob_dict
    print(
        f"Cubeless: win {pr['win']:.3f}  gammon {pr['win_gammon']:.3f}"
        f"  backgammon {pr['win_backgammon']:.3f} | lose gammon {pr['lose_gammon']:.3f}"
        f"  backgammon {pr['lose_backgammon']:.3f}   equity {decision.cubeless:+.3f}"
    )
    kind = "contact" if not position.is_race() else "race"
    games = rolled_out(advisor, position, ply)
    blend = f", blended with a rollout of {games} games" if games else ""
    print(f"Cube efficiency x = {decision.x:.2f} ({kind}); probabilities at {ply}-ply{blend}")
    scale = "match equity, normalised" if match is not None else "per current stake"
    print(f"Cubeful equities ({scale}):")
    rows = [("No double", decision.no_double), ("Double, take", decision.double_take)]
    rows.append(("Double, pass", decision.double_pass))
    for label, value in rows:
        if value is not None:
            print(f"  {label:<14} {value:+.3f}")
    action = _PHRASES[decision.decision]
    if decision.take is not None:
        action += ", take" if decision.take else ", pass"
    print(f"Proper cube action: {action}")
    return 0
