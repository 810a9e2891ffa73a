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

The dice, cube, match and Jacoby fields are read by ``dice_from_request`` and
``cube_and_match_from_request`` here, which ``nard cube``, ``nard moves`` and ``nard
agent`` use too, so every front end accepts exactly the same objects.  (This module
imports no command: the CLI is built on the server's parsing, not the other way round.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nard_rl.engine.position import Position, PositionError
from nard_rl.engine.rules import RuleSet, get_rules

if TYPE_CHECKING:  # imported where used: `nard moves` reads requests and starts fast
    from nard_rl.cube.met import MatchScore
    from nard_rl.cube.model import CubeState

POSITION_FIELDS = ("board", "position_id", "xgid", "gnubg_id")

POSITION_EXPECTED = (
    'a JSON object with a position: "board" (26 integers, the mover\'s view), '
    '"position_id", "xgid" or "gnubg_id"'
)
"""What a request must be, said by every error about its shape (HTTP and JSON lines)."""
HINT_EXPECTED = POSITION_EXPECTED + ', and "dice" ([d1, d2]; absent for the cube analysis)'


def dice_from_request(request: dict[str, Any]) -> tuple[int, int]:
    """The ``"dice"`` of a request: two integers in 1..6 (``true`` is not a die)."""
    dice = request.get("dice")
    if (
        not isinstance(dice, list)
        or len(dice) != 2
        or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)
    ):
        raise PositionError('"dice" must be two integers in 1..6')
    return dice[0], dice[1]


def _field(request: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = request.get(key, default)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f'"{key}" must be an integer, got {value!r}')
    if kind is not int and not isinstance(value, kind):
        raise ValueError(f'"{key}" must be a {kind.__name__}, got {value!r}')
    return value


def cube_and_match_from_request(
    request: dict[str, Any],
) -> tuple[CubeState, MatchScore | None, bool]:
    """The optional ``"cube"``, ``"match"`` and ``"jacoby"`` fields of a JSON request (the
    shared cube reference file's names; read alike by ``nard cube``, ``nard agent`` and the
    server), from the view of the side on roll: a centered cube at 1 and money play when
    absent."""
    from nard_rl.cube.met import MatchScore
    from nard_rl.cube.model import CubeState

    cube_req = _field(request, "cube", dict, {})
    cube = CubeState(_field(cube_req, "value", int, 1), _field(cube_req, "owner", str, "centered"))
    match_req = _field(request, "match", dict, {})
    length = _field(match_req, "length", int, 0)
    score = _field(match_req, "score", list, [0, 0])
    crawford = _field(match_req, "crawford", bool, False)
    jacoby = _field(request, "jacoby", bool, False)
    if len(score) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in score):
        raise ValueError(f'"match.score" must be two integers [mover, opponent], got {score!r}')
    if length < 0:
        raise ValueError(f'"match.length" must be 0 (money) or a match length, got {length}')
    match = None
    if length:
        if jacoby:
            raise ValueError("the Jacoby rule does not apply in matches (R33)")
        if cube.owner == "centered" and cube.value > 1:
            raise ValueError(
                "a centered cube above 1 comes from automatic doubles (R31): money only"
            )
        match = MatchScore(length, score[0], score[1], crawford)
    elif score != [0, 0] or crawford:
        raise ValueError('"match.score" and "match.crawford" need a match length above 0')
    return cube, match, jacoby


@dataclass(frozen=True)
class DecisionState:
    """Everything a move or cube decision depends on, from the mover's view."""

    position: Position
    rules: RuleSet
    dice: tuple[int, int] | None = None
    cube: CubeState = field(default_factory=lambda: _centered())
    match: MatchScore | None = None

    @property
    def match_dict(self) -> dict[str, Any] | None:
        m = self.match
        if m is None:
            return None
        return {"length": m.length, "score": [m.score_me, m.score_opp], "crawford": m.crawford}


def _centered() -> CubeState:
    from nard_rl.cube.model import CubeState

    return CubeState()


def state_from_request(
    request: dict[str, Any], default_rules: RuleSet | str = "standard"
) -> DecisionState:
    """Read one request (see the module docstring); ``ValueError`` names what is wrong."""
    from nard_rl.engine.ids import decode_gnubg_id, decode_xgid

    if not isinstance(request, dict):
        raise PositionError(f"expected {POSITION_EXPECTED}")
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
