"""Helpers every command shares: naming a position, the cube and the score, reading a
request, loading a net.

Commands import these from here, never from each other, so a command can change without
breaking its neighbours.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nard_rl.engine.position import Position, PositionError
from nard_rl.server.state import (  # their home; re-exported for the commands
    cube_and_match_from_request as cube_and_match_from_request,
)
from nard_rl.server.state import dice_from_request as dice_from_request

if TYPE_CHECKING:  # the cube and the score are imported where used: `nard moves` starts faster
    from omegaconf import DictConfig

    from nard_rl.cube.met import MatchScore
    from nard_rl.engine.rules import RuleSet
    from nard_rl.players.net import NetworkPlayer


def add_position_arguments(parser: argparse.ArgumentParser) -> None:
    """``--id`` / ``--xgid`` / ``--board``: the one way every command names a position."""
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--id", dest="position_id", help="GNUBG Position ID (player on roll moves)")
    src.add_argument("--xgid", help="XGID string")
    src.add_argument("--board", help="JSON board: 26 integers from the mover's view")


def position_from_args(args: argparse.Namespace) -> Position:
    """The position named by ``add_position_arguments`` (the start position by default)."""
    if args.position_id:
        return position_from_request({"position_id": args.position_id})
    if args.xgid:
        return position_from_request({"xgid": args.xgid})
    if args.board:
        try:
            board = json.loads(args.board)
        except (ValueError, RecursionError):
            raise PositionError(
                "--board expects a JSON list of 26 integers from the mover's view, e.g. "
                "'[0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, "
                f"2, 0]'; got {args.board[:60]!r}"
            ) from None
        return position_from_request({"board": board})
    return Position.start()


def position_from_request(request: dict[str, Any]) -> Position:
    """Build the position of one JSON request (``board``, ``position_id`` or ``xgid``)."""
    if "board" in request:
        board = request["board"]
        if not isinstance(board, list):
            raise PositionError("board must be a list of 26 integers")
        return Position(board)
    if "position_id" in request:
        return Position.from_id(str(request["position_id"]))
    if "xgid" in request:
        from nard_rl.engine.ids import decode_xgid

        return Position(decode_xgid(str(request["xgid"])).board)
    raise PositionError('request needs "board" or "position_id"')


def load_net_player(
    spec: str | Path = "default",
    *,
    rules: RuleSet | str | None = None,
    device: str = "cpu",
) -> NetworkPlayer:
    """The network player a ``--net``/``--player`` value names (``default`` or a path,
    through ``nard_rl.nets.paths.resolve_checkpoint``); a file that is no checkpoint raises a
    ``ValueError`` naming it instead of torch's own error types."""
    from nard_rl.nets.paths import resolve_checkpoint
    from nard_rl.players.net import NetworkPlayer

    path = resolve_checkpoint(spec, rules)
    with checkpoint_errors(path):
        return NetworkPlayer.from_checkpoint(path, rules=rules, device=device)


@contextlib.contextmanager
def checkpoint_errors(name: str | Path) -> Iterator[None]:
    """Turn torch.load's own errors for a file that is no checkpoint at all into a
    ``ValueError`` naming ``name`` (its first line: the commands print it as is)."""
    try:
        yield
    except (pickle.UnpicklingError, RuntimeError, EOFError) as exc:
        raise ValueError(f"{name} is not a readable checkpoint: {exc}".splitlines()[0]) from exc


# --------------------------------------------------------------------------------------
# the cube and the match score, from options or from a JSON request


def add_cube_arguments(parser: argparse.ArgumentParser) -> None:
    """``--cube/--owner/--match/--score/--crawford/--jacoby``: the cube and the score, from
    the view of the player on roll (``nard cube`` and ``nard hint``)."""
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


def match_from_args(args: argparse.Namespace) -> MatchScore | None:
    """The match score of the ``add_cube_arguments`` options (``None``: money play)."""
    if args.match < 0:
        raise ValueError(f"--match must be 0 (money) or a match length, got {args.match}")
    if args.match == 0:
        if tuple(args.score) != (0, 0) or args.crawford:
            raise ValueError("--score and --crawford need --match LENGTH")
        return None
    if args.jacoby:
        raise ValueError("the Jacoby rule does not apply in matches (R33)")
    from nard_rl.cube.met import MatchScore

    return MatchScore(args.match, args.score[0], args.score[1], bool(args.crawford))


# --------------------------------------------------------------------------------------
# Hydra apps (``nard train``, ``nard pipeline``)

HYDRA_CONFIG_PACKAGE = "nard_rl.conf"


def run_hydra_app(
    prog: str, config_name: str, app: Callable[[DictConfig], None], overrides: Sequence[str]
) -> int:
    """Run ``app`` as the Hydra app of ``config_name`` with ``overrides`` (``key=value``).

    Hydra reads its overrides from ``sys.argv`` only, so the CLI hands them over through a
    temporarily replaced ``sys.argv`` (``prog`` first, as Hydra's help shows it) and puts
    the caller's back afterwards, even when the app fails."""
    import hydra

    main = hydra.main(
        version_base="1.3", config_path="pkg://" + HYDRA_CONFIG_PACKAGE, config_name=config_name
    )(app)
    saved = sys.argv
    sys.argv = [prog, *overrides]
    try:
        main()
    finally:
        sys.argv = saved
    return 0
