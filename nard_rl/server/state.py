"""One decision state read from a JSON object: position, dice, cube, match score, rules.

The HTTP routes, ``nard hint --jsonl`` and ``nard agent`` all accept the same fields, so
they are read in one place and every malformed value raises a ``ValueError`` (usually
``PositionError``) that names the field and the problem:

* the position: ``"board"`` (26 ints, the mover's view), ``"position_id"``, ``"xgid"`` or
  ``"gnubg_id"`` (``PositionID:MatchID``).  An XGID or a gnubg ID also carries dice, cube
  and score; explicit fields override them;
* ``"dice"``: ``[d1, d2]`` (absent or null: before the roll);
* ``"cube"``: ``{"value": 1..64, "owner": "centered" | "mover" | "opponent"}``, ``mover``
  being the side whose view the board is;
* ``"match"``: ``{"length": N, "score": [mover, opponent], "crawford": bool}``; length 0
  (or no ``"match"``) is money play;
* ``"jacoby"``: the Jacoby rule for money play (R32), default: the rule set's;
* ``"rules"``: ``standard`` or ``mars``.

The cube, match and Jacoby fields are read by ``nard cube --jsonl``'s parser
(``nard_rl.commands.common.cube_and_match_from_request``), so every front end accepts
exactly the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nard_rl.commands.common import cube_and_match_from_request, dice_from_request
from nard_rl.cube import CubeState
from nard_rl.engine.ids import decode_gnubg_id, decode_xgid
from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import RuleSet, get_rules
from nard_rl.met import MatchScore

POSITION_FIELDS = ("board", "position_id", "xgid", "gnubg_id")


@dataclass(frozen=True)
class DecisionState:
    """Everything a move or cube decision depends on, from the mover's view."""

    position: Position
    rules: RuleSet
    dice: tuple[int, int] | None = None
    cube: CubeState = field(default_factory=CubeState)
    match: MatchScore | None = None

    @property
    def match_dict(self) -> dict[str, Any] | None:
        m = self.match
        if m is None:
            return None
        return {"length": m.length, "score": [m.score_me, m.score_opp], "crawford": m.crawford}


def state_from_request(
    request: dict[str, Any], default_rules: RuleSet | str = "standard"
) -> DecisionState:
    """Read one request (see the module docstring); ``ValueError`` names what is wrong."""
    if not isinstance(request, dict):
        raise PositionError("the request must be a JSON object")
    given = [f for f in POSITION_FIELDS if request.get(f) is not None]
    if len(given) != 1:
        raise PositionError(
            f"give exactly one of {', '.join(repr(f) for f in POSITION_FIELDS)}"
            + (f" (got {', '.join(given)})" if given else "")
        )
    rules_name = request.get("rules")
    if rules_name is not None and not isinstance(rules_name, str):
        raise PositionError(f'"rules" must be "standard" or "mars", got {rules_name!r}')
    rules = get_rules(rules_name or default_rules)

    dice: tuple[int, int] | None = None
    implied: dict[str, Any] = {}  # what an XGID or a gnubg ID says about cube and score
    field = given[0]
    raw = request[field]
    if field == "board":
        if not isinstance(raw, list):
            raise PositionError('"board" must be a list of 26 integers')
        position = Position(raw)
    elif not isinstance(raw, str):
        raise PositionError(f'"{field}" must be a string')
    elif field == "position_id":
        position = Position.from_id(raw.strip())
    else:
        info = decode_xgid(raw) if field == "xgid" else None
        board, minfo = (info.board, None) if info else decode_gnubg_id(raw)
        src: Any = info or minfo
        position = Position(board)
        dice = src.dice if src.dice != (0, 0) else None
        implied["cube"] = {"value": src.cube_value, "owner": src.cube_owner}
        implied["jacoby"] = bool(src.jacoby) and not src.match_length
        if src.match_length:
            implied["match"] = {
                "length": src.match_length,
                "score": list(src.score),
                "crawford": bool(src.crawford),
            }

    if request.get("dice") is not None:
        dice = dice_from_request(request)
    fields = {**implied, **{k: request[k] for k in ("cube", "match", "jacoby") if k in request}}
    if "jacoby" not in fields and "match" not in fields and rules.jacoby:
        fields["jacoby"] = True
    try:
        cube, match, jacoby = cube_and_match_from_request(fields)
    except ValueError as exc:
        raise PositionError(str(exc)) from None
    if not rules.cube and (cube.value > 1 or cube.owner != "centered"):
        raise PositionError(f"the {rules.name} rule set has no doubling cube (R28)")
    if jacoby != rules.jacoby:
        rules = rules.with_options(jacoby=jacoby)
    if position.winner() is not None:
        raise PositionError("the game in this position is already over")
    return DecisionState(position, rules, dice, cube, match)
