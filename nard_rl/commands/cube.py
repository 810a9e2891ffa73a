"""``nard cube``: the network's cube action for a position before the roll (money or match)."""

from __future__ import annotations

import argparse
import json
import pickle
import sys

import numpy as np

from nard_rl.commands.moves import add_position_arguments, position_from_args
from nard_rl.cube import (
    PROB_NAMES,
    CubeDecision,
    CubeState,
    cube_decision,
    cube_efficiency,
)
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import get_rules
from nard_rl.met import MatchScore

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
    add_position_arguments(parser)
    parser.add_argument("--cube", type=int, default=1, help="cube value: 1, 2, 4, ..., 64")
    parser.add_argument(
        "--owner",
        choices=("centered", "mover", "opponent"),
        default="centered",
        help="who owns the cube (default: centered)",
    )
    parser.add_argument("--match", type=int, default=0, help="match length (0: money play)")
    parser.add_argument(
        "--score", nargs=2, type=int, default=(0, 0), metavar=("ME", "OPP"), help="match score"
    )
    parser.add_argument("--crawford", action="store_true", help="this is the Crawford game")
    parser.add_argument("--jacoby", action="store_true", help="Jacoby rule (money play, R32)")
    parser.add_argument("--net", default="default", help="checkpoint path or 'default'")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def network_probabilities(position: Position, net: str = "default") -> np.ndarray:
    """The net's five cubeless probabilities for the player on roll, before the roll."""

    from nard_rl.net_player import NetworkPlayer, default_checkpoint_path

    path = default_checkpoint_path() if net == "default" else net
    try:
        player = NetworkPlayer.from_checkpoint(path)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as exc:
        # torch.load's own errors for files that are no checkpoint at all
        raise ValueError(f"{path} is not a readable checkpoint: {exc}".splitlines()[0]) from exc
    return player.pre_roll_probabilities(position.array()[None, :])[0]


def match_from_args(args: argparse.Namespace) -> MatchScore | None:
    if args.match < 0:
        raise ValueError(f"--match must be 0 (money) or a match length, got {args.match}")
    if args.match == 0:
        if tuple(args.score) != (0, 0) or args.crawford:
            raise ValueError("--score and --crawford need --match LENGTH")
        return None
    if args.jacoby:
        raise ValueError("the Jacoby rule does not apply in matches (R33)")
    return MatchScore(args.match, args.score[0], args.score[1], bool(args.crawford))


def evaluate(
    position: Position,
    cube: CubeState,
    match: MatchScore | None,
    net: str = "default",
    *,
    jacoby: bool = False,
) -> tuple[np.ndarray, CubeDecision]:
    """The net's probabilities and the cube decision built on them (``nard_rl.cube``)."""
    if position.winner() is not None:
        raise PositionError("the game is over: there is no cube decision")
    probs = network_probabilities(position, net)
    rules = get_rules("standard").with_options(jacoby=jacoby)
    decision = cube_decision(probs, cube, match, x=cube_efficiency(position), rules=rules)
    return probs, decision


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
        position = position_from_args(args)
        cube = CubeState(args.cube, args.owner)
        match = match_from_args(args)
        probs, decision = evaluate(position, cube, match, args.net, jacoby=args.jacoby)
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
    print(f"Cube efficiency x = {decision.x:.2f} ({kind})")
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
