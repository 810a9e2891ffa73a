"""Helpers every command shares: naming a position, reading a request, loading a net.

Commands import these from here, never from each other, so a command can change without
breaking its neighbours.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import RuleSet

if TYPE_CHECKING:
    from nard_rl.net_player import NetworkPlayer


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
        return position_from_request({"board": json.loads(args.board)})
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


def dice_from_request(request: dict[str, Any]) -> tuple[int, int]:
    dice = request.get("dice")
    if (
        not isinstance(dice, list)
        or len(dice) != 2
        or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)
    ):
        raise PositionError('"dice" must be two integers in 1..6')
    return dice[0], dice[1]


def load_net_player(
    spec: str | Path = "default",
    *,
    rules: RuleSet | str | None = None,
    device: str = "cpu",
) -> NetworkPlayer:
    """The network player a ``--net``/``--player`` value names (``default`` or a path,
    through ``net_player.resolve_checkpoint``); a file that is no checkpoint raises a
    ``ValueError`` naming it instead of torch's own error types."""
    from nard_rl.net_player import NetworkPlayer, resolve_checkpoint

    path = resolve_checkpoint(spec, rules)
    try:
        return NetworkPlayer.from_checkpoint(path, rules=rules, device=device)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as exc:
        # torch.load's own errors for files that are no checkpoint at all
        raise ValueError(f"{path} is not a readable checkpoint: {exc}".splitlines()[0]) from exc
