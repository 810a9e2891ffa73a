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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nard_rl.commands.common import dice_from_request
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


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PositionError(f"{what} must be an integer, got {value!r}")
    return value


def cube_from_field(value: object) -> CubeState:
    """``{"value": v, "owner": o}`` as a ``CubeState`` (defaults: 1, centered)."""
    if value is None:
        return CubeState()
    if not isinstance(value, dict):
        raise PositionError('"cube" must be an object {"value": 1..64, "owner": ...}')
    unknown = set(value) - {"value", "owner"}
    if unknown:
        raise PositionError(f'"cube" has unknown fields {sorted(unknown)}')
    owner = value.get("owner", "centered")
    if not isinstance(owner, str):
        raise PositionError(f'"cube.owner" must be centered, mover or opponent, got {owner!r}')
    try:
        return CubeState(_int(value.get("value", 1), '"cube.value"'), owner)  # type: ignore[arg-type]
    except ValueError as exc:
        raise PositionError(f'"cube": {exc}') from None


def match_from_field(value: object) -> MatchScore | None:
    """``{"length", "score", "crawford"}`` as a ``MatchScore``; length 0 is money (None)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise PositionError('"match" must be an object {"length", "score", "crawford"}')
    unknown = set(value) - {"length", "score", "crawford"}
    if unknown:
        raise PositionError(f'"match" has unknown fields {sorted(unknown)}')
    length = _int(value.get("length", 0), '"match.length"')
    score = value.get("score", [0, 0])
    crawford = value.get("crawford", False)
    if not isinstance(crawford, bool):
        raise PositionError(f'"match.crawford" must be true or false, got {crawford!r}')
    if not isinstance(score, list) or len(score) != 2:
        raise PositionError('"match.score" must be [mover, opponent]')
    me, opp = (_int(s, '"match.score"') for s in score)
    if length == 0:
        if me or opp or crawford:
            raise PositionError('money play ("match.length" 0) has no score and no Crawford game')
        return None
    try:
        return MatchScore(length, me, opp, crawford)
    except ValueError as exc:
        raise PositionError(f'"match": {exc}') from None


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
    cube = CubeState()
    match: MatchScore | None = None
    jacoby = rules.jacoby
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
    elif field == "xgid":
        info = decode_xgid(raw)
        position = Position(info.board)
        dice = info.dice if info.dice != (0, 0) else None
        cube = CubeState(info.cube_value, info.cube_owner)
        jacoby = info.jacoby
        if info.match_length:
            match = MatchScore(info.match_length, *info.score, info.crawford)
    else:
        board, minfo = decode_gnubg_id(raw)
        position = Position(board)
        dice = minfo.dice if minfo.dice != (0, 0) else None
        cube = CubeState(minfo.cube_value, minfo.cube_owner)
        jacoby = minfo.jacoby
        if minfo.match_length:
            match = MatchScore(minfo.match_length, *minfo.score, minfo.crawford)

    if request.get("dice") is not None:
        dice = dice_from_request(request)
    if "cube" in request:
        cube = cube_from_field(request["cube"])
    if "match" in request:
        match = match_from_field(request["match"])
    if request.get("jacoby") is not None:
        if not isinstance(request["jacoby"], bool):
            raise PositionError('"jacoby" must be true or false')
        jacoby = request["jacoby"]
    if match is not None:
        jacoby = False  # R33: no Jacoby rule in matches
        if cube.owner == "centered" and cube.value > 1:
            raise PositionError("a centered cube above 1 exists only in money play (R31, R33)")
    if not rules.cube and (cube.value > 1 or cube.owner != "centered"):
        raise PositionError(f"the {rules.name} rule set has no doubling cube (R28)")
    if jacoby != rules.jacoby:
        rules = rules.with_options(jacoby=jacoby)
    if position.winner() is not None:
        raise PositionError("the game in this position is already over")
    return DecisionState(position, rules, dice, cube, match)
