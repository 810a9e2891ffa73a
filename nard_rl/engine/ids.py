"""Text notations for positions and match states: GNUBG Position ID, Match ID and XGID.

These are the strings people paste between programs, so every decoder here validates
fully and raises ``PositionError`` saying what is wrong, and every encoder writes the
one canonical string of its value: ``encode(decode(s)) == s`` for every string an
encoder (or gnubg) writes.  The decoders are a little more lenient than that: they
ignore surrounding blanks, read a Match ID with the lower die first, and read XGIDs
without the ``XGID=`` prefix or without the last (max cube) field.

**Position ID** (GNU Backgammon): the 80-bit position key, written as 14 characters
of standard base64 (``A-Z a-z 0-9 + /``, no padding).  The key lists, for each
player, the checkers on its 24 points from that player's own ace point upwards and
then on its bar, each count ``n`` written as ``n`` one-bits followed by a zero-bit;
bits fill each byte from its least significant bit.  The player **not** on roll comes
first, then the player on roll (checked against gnubg 1.07: ``gnubg.board()[0]`` is
the side that just moved and ``positionid`` encodes it first).  Borne-off checkers
are not stored.  The start position is ``4HPwATDgc/ABMA``.

**Match ID** (GNU Backgammon): a 66-bit key, plus the Jacoby bit gnubg 1.07 adds,
written as 12 base64 characters.  Bits, counted from 0 like the position key:

======  ====  ===============================================================
bits    size  meaning
======  ====  ===============================================================
0-3     4     log2 of the cube value
4-5     2     cube owner: 0 / 1 = that player, 3 = centred
6       1     player on roll (the one who rolls or has rolled the dice)
7       1     Crawford game
8-10    3     game state (:class:`GameState`)
11      1     player whose turn it is to act (differs from bit 6 while a
                double or a resignation awaits an answer)
12      1     a double is offered
13-14   2     resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon
15-17   3     die 1, the higher die (0 = not rolled): gnubg writes the higher
                die first, so the ID does not keep the order of the roll
18-20   3     die 2, the lower die
21-35   15    match length (0 = money; gnubg reads at most 64)
36-50   15    score of player 0 (at most the match length in a match)
51-65   15    score of player 1
66      1     set when the Jacoby rule is **not** in force (gnubg 1.07
                behaviour: ``cAgAAAAAAAAA``, gnubg's "no game yet" state, reads as
                Jacoby on; the same money state with Jacoby off ends in ``E``)
67-71   5     unused, must be zero
======  ====  ===============================================================

gnubg names its players 0 and 1 (1 is the bottom player of its board, normally the
human).  :class:`MatchInfo` keeps those indices for the player on roll and the player
to act, so any gnubg Match ID round-trips, but states the cube owner and the score
relative to the player on roll, like the rest of the project (the mover's view).

**XGID** (eXtreme Gammon)::

    XGID=<position>:<cube>:<owner>:<turn>:<dice>:<score1>:<score2>:<rules>:<length>:<max>

* ``position``: 26 characters seen from the *bottom* player, whatever the turn:
  character 0 is the top player's bar, 1..24 the points numbered from the bottom
  player's ace point, 25 the bottom player's bar; ``-`` empty, ``A``..``O`` 1..15
  checkers of the bottom player, ``a``..``o`` 1..15 of the top player.  So it is our
  26-int board with the bottom player as the mover.
* ``cube``: log2 of the cube value; ``owner``: 1 bottom, -1 top, 0 centred.
* ``turn``: 1 the bottom player is on roll, -1 the top player.
* ``dice``: ``00`` to roll (or double), two digits once rolled (kept in their
  order), ``D`` a double has been offered by the player on roll and the opponent must
  answer (the cube field is still the value before the double), ``B`` beavered,
  ``R`` raccooned.  This follows gnubg's reading of XGIDs (``set xgid``).
* ``score1`` / ``score2``: bottom and top player's match scores.
* ``rules``: in a match 1 = this is the Crawford game; in money play a bit set:
  1 = Jacoby rule, 2 = beavers allowed.
* ``length``: match length, 0 for money; ``max``: log2 of the largest cube
  allowed (money play).  Some XGIDs omit ``max``; it then reads as 64 (R24).

:class:`XGIDInfo` stores the board from the view of the player on roll (flipping
when ``turn`` is -1), and the score and cube owner relative to that player.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Literal

from nard_rl.engine.position import (
    BOARD_SIZE,
    CHECKERS,
    PositionError,
    flip_board,
    validate_board,
)

if TYPE_CHECKING:
    from nard_rl.engine.position import Position

__all__ = [
    "MATCH_ID_LENGTH",
    "MAX_MATCH_LENGTH",
    "POSITION_ID_LENGTH",
    "CubeOwner",
    "GameState",
    "MatchInfo",
    "XGIDInfo",
    "decode_gnubg_id",
    "decode_match_id",
    "decode_position_id",
    "decode_xgid",
    "encode_gnubg_id",
    "encode_match_id",
    "encode_position_id",
    "encode_xgid",
    "position_id_of",
]

POSITION_ID_LENGTH = 14
MATCH_ID_LENGTH = 12
_POSITION_KEY_BYTES = 10
_MATCH_KEY_BYTES = 9
_POINTS_AND_BAR = 25  # per player in the position key
_BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_FIELD_LIMIT = 1 << 15  # match length and scores are 15-bit fields
MAX_MATCH_LENGTH = 64  # the longest match gnubg accepts in a Match ID

CubeOwner = Literal["centered", "mover", "opponent"]
_CUBE_OWNERS: tuple[str, ...] = ("centered", "mover", "opponent")


class GameState(IntEnum):
    """gnubg's game states, as stored in bits 8-10 of the Match ID."""

    NONE = 0  # no game started yet
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4  # ended by a dropped double


# --------------------------------------------------------------------------------------
# base64 helpers shared by both gnubg IDs
# --------------------------------------------------------------------------------------
def _key_to_text(key: int, n_bytes: int, n_chars: int) -> str:
    return base64.b64encode(key.to_bytes(n_bytes, "little")).decode("ascii")[:n_chars]


def _text_to_key(text: object, n_bytes: int, n_chars: int, what: str) -> int:
    """Read a base64 gnubg ID into its key, rejecting anything gnubg would not write.

    gnubg writes no padding, so the last character of a Position ID carries 4 unused
    bits; they must be zero or two different strings would name one position.
    """
    if not isinstance(text, str):
        raise PositionError(f"a {what} must be a string, got {type(text).__name__}")
    text = text.strip()
    if len(text) != n_chars:
        raise PositionError(f"a {what} has {n_chars} characters, got {len(text)}: {text!r}")
    bad = sorted({c for c in text if c not in _BASE64_ALPHABET})
    if bad:
        raise PositionError(
            f"{what} {text!r} contains characters outside base64 (A-Z a-z 0-9 + /): "
            + " ".join(repr(c) for c in bad)
        )
    raw = base64.b64decode(text + "=" * (-n_chars % 4))
    spare_bits = n_chars * 6 - n_bytes * 8
    if _BASE64_ALPHABET.index(text[-1]) & ((1 << spare_bits) - 1):
        raise PositionError(f"{what} {text!r} has non-zero padding bits in its last character")
    return int.from_bytes(raw, "little")


# --------------------------------------------------------------------------------------
# Position ID
# --------------------------------------------------------------------------------------
def _board_counts(board: tuple[int, ...]) -> list[int]:
    """The 50 counts of the position key: opponent's points 1..24 and bar, then mover's."""
    opponent = [-v if v < 0 else 0 for v in board[24:0:-1]]
    mover = [v if v > 0 else 0 for v in board[1:25]]
    return [*opponent, -board[0], *mover, board[25]]


def encode_position_id(board: Sequence[int]) -> str:
    """The GNUBG Position ID of ``board`` (26 ints, the mover being the player on roll)."""
    # the key's bits, lowest first: a run of ones per count, each closed by a zero; built
    # as text and read once (a shift per count cost a hint more than its move generation)
    bits = "".join(["1" * c + "0" for c in _board_counts(validate_board(board))])
    return _key_to_text(int(bits[::-1], 2), _POSITION_KEY_BYTES, POSITION_ID_LENGTH)


def decode_position_id(pid: str) -> list[int]:
    """The board (26 ints, mover's view) of a GNUBG Position ID; ``PositionError`` if bad."""
    key = _text_to_key(pid, _POSITION_KEY_BYTES, POSITION_ID_LENGTH, "Position ID")
    counts: list[int] = []
    run = 0
    bit = 0
    total_bits = _POSITION_KEY_BYTES * 8
    while len(counts) < 2 * _POINTS_AND_BAR:
        if bit == total_bits:
            raise PositionError(
                f"Position ID {pid!r} ends after {len(counts)} of the 50 point counts "
                "(too many checkers)"
            )
        if key >> bit & 1:
            run += 1
        else:
            counts.append(run)
            run = 0
        bit += 1
    if key >> bit:
        raise PositionError(
            f"Position ID {pid!r} has stray bits after the last count (more than 30 checkers?)"
        )
    opponent, mover = counts[:_POINTS_AND_BAR], counts[_POINTS_AND_BAR:]
    for name, side in (("player not on roll", opponent), ("player on roll", mover)):
        if sum(side) > CHECKERS:
            raise PositionError(f"Position ID {pid!r} gives the {name} {sum(side)} checkers")
    board = [0] * BOARD_SIZE
    board[0] = -opponent[24]
    board[25] = mover[24]
    for p in range(1, 25):
        mine, theirs = mover[p - 1], opponent[24 - p]
        if mine and theirs:
            raise PositionError(
                f"Position ID {pid!r} puts both players on point {p} "
                f"({mine} of the player on roll, {theirs} of the other)"
            )
        board[p] = mine - theirs
    validate_board(board)
    return board


def position_id_of(position: Position | Sequence[int]) -> str:
    """Position ID of a :class:`Position` or of a raw board, whichever is at hand."""
    board = getattr(position, "board", position)
    return encode_position_id(board)


# --------------------------------------------------------------------------------------
# Match ID
# --------------------------------------------------------------------------------------
_MATCH_LAYOUT: tuple[tuple[str, int, int], ...] = (
    # (field, first bit, width)
    ("cube_log", 0, 4),
    ("owner", 4, 2),
    ("on_roll", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("doubled", 12, 1),
    ("resignation", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("no_jacoby", 66, 1),
)
_MATCH_KEY_BITS = 67


def _cube_log(value: int, what: str, limit: int = 15) -> int:
    if value < 1 or value & (value - 1) or value.bit_length() - 1 > limit:
        raise PositionError(f"{what} must be a power of two from 1 to 2**{limit}, got {value}")
    return value.bit_length() - 1


@dataclass(frozen=True)
class MatchInfo:
    """Everything a gnubg Match ID says about the match and the game in progress.

    ``player_on_roll`` and ``turn`` are gnubg's player indices (0 or 1; gnubg calls its
    bottom player 1, and every ID this project writes has the mover as player 1).
    ``turn`` is the player who must act now; it defaults to ``player_on_roll`` and only
    differs while a double or a resignation waits for an answer.  ``cube_owner`` and
    ``score`` are relative to the player on roll: ``score == (on roll, other)``.
    ``game_state`` defaults to a game in progress (gnubg's own "no game yet" ID,
    ``cAgAAAAAAAAA``, is ``game_state=GameState.NONE, jacoby=True``).
    ``jacoby`` is the Jacoby rule (R32); it is meaningful in money play only.
    """

    cube_value: int = 1
    cube_owner: CubeOwner = "centered"
    player_on_roll: int = 1
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int | None = None
    double_offered: bool = False
    resignation: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        if self.turn is None:
            object.__setattr__(self, "turn", self.player_on_roll)
        # The Match ID does not keep the order of the roll: gnubg writes the higher die
        # first, so MatchInfo keeps it that way too and round trips stay exact.
        object.__setattr__(self, "dice", tuple(sorted((int(d) for d in self.dice), reverse=True)))
        object.__setattr__(self, "score", tuple(int(s) for s in self.score))
        try:
            object.__setattr__(self, "game_state", GameState(self.game_state))
        except ValueError:
            raise PositionError(f"game_state must be 0..4, got {self.game_state}") from None
        _cube_log(int(self.cube_value), "cube_value")
        if self.cube_owner not in _CUBE_OWNERS:
            raise PositionError(
                f"cube_owner must be one of {_CUBE_OWNERS}, got {self.cube_owner!r}"
            )
        for name in ("player_on_roll", "turn"):
            if getattr(self, name) not in (0, 1):
                raise PositionError(f"{name} must be player 0 or 1, got {getattr(self, name)!r}")
        if not 0 <= self.resignation <= 3:
            raise PositionError(f"resignation must be 0..3, got {self.resignation}")
        if len(self.dice) != 2 or not (self.dice == (0, 0) or all(1 <= d <= 6 for d in self.dice)):
            raise PositionError(f"dice must be (0, 0) or two values in 1..6, got {self.dice}")
        # gnubg refuses to read Match IDs beyond these limits (matchid.c's checks).
        if not 0 <= self.match_length <= MAX_MATCH_LENGTH:
            raise PositionError(
                f"match_length must be 0 (money) to {MAX_MATCH_LENGTH}, got {self.match_length}"
            )
        top = self.match_length if self.match_length else _FIELD_LIMIT - 1
        if len(self.score) != 2 or not all(0 <= s <= top for s in self.score):
            raise PositionError(
                f"score must be two values in 0..{top}"
                + (" (the match length)" if self.match_length else "")
                + f", got {self.score}"
            )
        if self.crawford and not self.match_length:
            raise PositionError("the Crawford rule exists only in match play (R34)")

    @property
    def is_money(self) -> bool:
        return self.match_length == 0


def encode_match_id(info: MatchInfo) -> str:
    """The gnubg Match ID of ``info``."""
    me = info.player_on_roll
    owner = {"centered": 3, "mover": me, "opponent": 1 - me}[info.cube_owner]
    scores = info.score if me == 0 else info.score[::-1]
    values = {
        "cube_log": _cube_log(info.cube_value, "cube_value"),
        "owner": owner,
        "on_roll": me,
        "crawford": int(info.crawford),
        "game_state": int(info.game_state),
        "turn": info.turn,
        "doubled": int(info.double_offered),
        "resignation": info.resignation,
        "die1": info.dice[0],
        "die2": info.dice[1],
        "length": info.match_length,
        "score0": scores[0],
        "score1": scores[1],
        "no_jacoby": int(not info.jacoby),
    }
    key = 0
    for name, first, _width in _MATCH_LAYOUT:
        key |= int(values[name]) << first
    return _key_to_text(key, _MATCH_KEY_BYTES, MATCH_ID_LENGTH)


def decode_match_id(mid: str) -> MatchInfo:
    """The :class:`MatchInfo` of a gnubg Match ID; ``PositionError`` names what is wrong."""
    key = _text_to_key(mid, _MATCH_KEY_BYTES, MATCH_ID_LENGTH, "Match ID")
    f = {name: key >> first & ((1 << width) - 1) for name, first, width in _MATCH_LAYOUT}
    if key >> _MATCH_KEY_BITS:
        raise PositionError(f"Match ID {mid!r} has stray bits after bit 66")
    if f["owner"] == 2:
        raise PositionError(f"Match ID {mid!r} has cube owner 2 (only 0, 1 and 3 exist)")
    if f["game_state"] > GameState.DROPPED:
        raise PositionError(f"Match ID {mid!r} has game state {f['game_state']} (only 0..4)")
    dice = (f["die1"], f["die2"])
    if not (dice == (0, 0) or all(1 <= d <= 6 for d in dice)):
        raise PositionError(f"Match ID {mid!r} has impossible dice {dice}")
    me = f["on_roll"]
    owner: CubeOwner = (
        "centered" if f["owner"] == 3 else "mover" if f["owner"] == me else "opponent"
    )
    scores = (f["score0"], f["score1"])
    try:
        return MatchInfo(
            cube_value=1 << f["cube_log"],
            cube_owner=owner,
            player_on_roll=me,
            crawford=bool(f["crawford"]),
            game_state=GameState(f["game_state"]),
            turn=f["turn"],
            double_offered=bool(f["doubled"]),
            resignation=f["resignation"],
            dice=dice,
            match_length=f["length"],
            score=scores if me == 0 else scores[::-1],
            jacoby=not f["no_jacoby"],
        )
    except PositionError as exc:
        raise PositionError(f"Match ID {mid!r}: {exc}") from None


def encode_gnubg_id(board: Sequence[int], info: MatchInfo | None = None) -> str:
    """gnubg's combined ``PositionID:MatchID`` (what ``set gnubgid`` accepts)."""
    return f"{encode_position_id(board)}:{encode_match_id(info or MatchInfo())}"


def decode_gnubg_id(text: str) -> tuple[list[int], MatchInfo]:
    """Board and match state of a ``PositionID:MatchID`` string."""
    parts = text.strip().split(":")
    if len(parts) != 2:
        raise PositionError(f"a gnubg ID is 'PositionID:MatchID', got {text!r}")
    return decode_position_id(parts[0]), decode_match_id(parts[1])


# --------------------------------------------------------------------------------------
# XGID
# --------------------------------------------------------------------------------------
_XGID_CUBE_ACTIONS = ("", "D", "B", "R")
_DEFAULT_MAX_CUBE = 64  # R24: the cube never goes above 64


@dataclass(frozen=True)
class XGIDInfo:
    """An XGID, with the board and the score from the view of the player on roll.

    ``turn`` is the XGID's own field: 1 when the bottom player (upper-case checkers) is
    on roll, -1 for the top player; the XGID position string is ``board`` itself when
    ``turn == 1`` and its flip otherwise.  ``cube_action`` is ``""`` (none), ``"D"``
    (the player on roll has doubled; ``cube_value`` is still the value before the
    double), ``"B"`` (beavered) or ``"R"`` (raccooned), and excludes rolled dice.
    ``crawford`` applies to matches only, ``jacoby`` and ``beaver`` to money play only.
    """

    board: tuple[int, ...]
    cube_value: int = 1
    cube_owner: CubeOwner = "centered"
    turn: int = 1
    dice: tuple[int, int] = (0, 0)
    cube_action: str = ""
    score: tuple[int, int] = (0, 0)
    match_length: int = 0
    crawford: bool = False
    jacoby: bool = False
    beaver: bool = False
    max_cube: int = _DEFAULT_MAX_CUBE

    def __post_init__(self) -> None:
        object.__setattr__(self, "board", validate_board(self.board))
        object.__setattr__(self, "dice", tuple(int(d) for d in self.dice))
        object.__setattr__(self, "score", tuple(int(s) for s in self.score))
        _cube_log(int(self.cube_value), "cube_value")
        _cube_log(int(self.max_cube), "max_cube")
        if self.cube_owner not in _CUBE_OWNERS:
            raise PositionError(
                f"cube_owner must be one of {_CUBE_OWNERS}, got {self.cube_owner!r}"
            )
        if self.turn not in (1, -1):
            raise PositionError(f"turn must be 1 (bottom player) or -1 (top), got {self.turn!r}")
        if self.cube_action not in _XGID_CUBE_ACTIONS:
            raise PositionError(
                f"cube_action must be '', 'D', 'B' or 'R', got {self.cube_action!r}"
            )
        if len(self.dice) != 2 or not (self.dice == (0, 0) or all(1 <= d <= 6 for d in self.dice)):
            raise PositionError(f"dice must be (0, 0) or two values in 1..6, got {self.dice}")
        if self.cube_action and self.dice != (0, 0):
            raise PositionError("an XGID cannot show both a cube action and rolled dice")
        if self.match_length < 0 or len(self.score) != 2 or min(self.score) < 0:
            raise PositionError(
                f"match length and scores cannot be negative ({self.match_length}, {self.score})"
            )
        if self.match_length and (self.jacoby or self.beaver):
            raise PositionError("the Jacoby and beaver rules exist only in money play (R33)")
        if not self.match_length and self.crawford:
            raise PositionError("the Crawford rule exists only in match play (R34)")

    def position_string(self) -> str:
        """The 26-character XGID position, seen from the bottom player."""
        bottom = self.board if self.turn == 1 else flip_board(self.board)
        return "".join(
            "-" if n == 0 else chr(ord("A") + n - 1) if n > 0 else chr(ord("a") - n - 1)
            for n in bottom
        )

    def to_match_info(self) -> MatchInfo:
        """The same state as gnubg reads it: the player on roll is gnubg's player 1."""
        if self.cube_action in ("B", "R"):
            raise PositionError("gnubg Match IDs cannot express a beaver or a raccoon")
        doubled = self.cube_action == "D"
        return MatchInfo(
            cube_value=self.cube_value,
            cube_owner=self.cube_owner,
            player_on_roll=1,
            crawford=self.crawford,
            game_state=GameState.PLAYING,
            turn=0 if doubled else 1,
            double_offered=doubled,
            dice=self.dice,
            match_length=self.match_length,
            score=self.score,
            jacoby=self.jacoby,
        )

    @classmethod
    def from_match_info(
        cls, board: Sequence[int], info: MatchInfo, *, max_cube: int = _DEFAULT_MAX_CUBE
    ) -> XGIDInfo:
        """An XGID for ``board`` (mover's view) and a match state, the mover at the bottom."""
        if info.resignation:
            raise PositionError("an XGID cannot express an offered resignation")
        return cls(
            board=tuple(board),
            cube_value=info.cube_value,
            cube_owner=info.cube_owner,
            turn=1,
            dice=info.dice,
            cube_action="D" if info.double_offered else "",
            score=info.score,
            match_length=info.match_length,
            crawford=info.crawford if info.match_length else False,
            jacoby=info.jacoby if not info.match_length else False,
            max_cube=max_cube,
        )


def encode_xgid(info: XGIDInfo) -> str:
    """The XGID string (with its ``XGID=`` prefix) of ``info``."""
    owner = {"centered": 0, "mover": info.turn, "opponent": -info.turn}[info.cube_owner]
    dice = info.cube_action or f"{info.dice[0]}{info.dice[1]}"
    bottom_score, top_score = info.score if info.turn == 1 else info.score[::-1]
    # The rules field means Crawford in a match, Jacoby + 2 * beaver in money play.
    rules = int(info.crawford) if info.match_length else int(info.jacoby) + 2 * int(info.beaver)
    fields = [
        info.position_string(),
        str(_cube_log(info.cube_value, "cube_value")),
        str(owner),
        str(info.turn),
        dice,
        str(bottom_score),
        str(top_score),
        str(rules),
        str(info.match_length),
        str(_cube_log(info.max_cube, "max_cube")),
    ]
    return "XGID=" + ":".join(fields)


def _xgid_int(text: str, what: str, xgid: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text):
        raise PositionError(f"XGID {xgid!r}: {what} must be a whole number, got {text!r}")
    return int(text)


def decode_xgid(s: str) -> XGIDInfo:
    """Parse an XGID (``XGID=`` prefix optional); ``PositionError`` names what is wrong."""
    if not isinstance(s, str):
        raise PositionError(f"an XGID must be a string, got {type(s).__name__}")
    text = s.strip()
    if text.upper().startswith("XGID="):
        text = text[5:]
    parts = text.split(":")
    if len(parts) not in (9, 10):
        raise PositionError(
            f"XGID {s!r} has {len(parts)} ':'-separated fields; expected 10 "
            "(position:cube:owner:turn:dice:score1:score2:rules:length:maxcube)"
        )
    pos = parts[0]
    if len(pos) != BOARD_SIZE:
        raise PositionError(f"XGID {s!r}: the position has {len(pos)} characters, not 26")
    bottom = []
    for i, ch in enumerate(pos):
        if ch == "-":
            bottom.append(0)
        elif "A" <= ch <= "O":
            bottom.append(ord(ch) - ord("A") + 1)
        elif "a" <= ch <= "o":
            bottom.append(-(ord(ch) - ord("a") + 1))
        else:
            raise PositionError(
                f"XGID {s!r}: character {i} of the position is {ch!r}; "
                "only '-', 'A'-'O' and 'a'-'o' are allowed"
            )
    if bottom[0] > 0 or bottom[25] < 0:
        raise PositionError(
            f"XGID {s!r}: character 0 is the top player's bar (lower case) and character 25 "
            "the bottom player's bar (upper case)"
        )
    cube_log = _xgid_int(parts[1], "the cube field", s)
    owner = _xgid_int(parts[2], "the cube owner", s)
    turn = _xgid_int(parts[3], "the turn", s)
    if owner not in (-1, 0, 1):
        raise PositionError(f"XGID {s!r}: cube owner must be -1, 0 or 1, got {owner}")
    if turn not in (-1, 1):
        raise PositionError(f"XGID {s!r}: turn must be 1 or -1, got {turn}")
    if not 0 <= cube_log <= 15:
        raise PositionError(f"XGID {s!r}: cube field must be 0..15 (log2), got {cube_log}")
    dice_text = parts[4]
    dice = (0, 0)
    action = ""
    if dice_text in ("D", "B", "R"):
        action = dice_text
    elif re.fullmatch(r"00|[1-6][1-6]", dice_text):
        dice = (int(dice_text[0]), int(dice_text[1]))
    else:
        raise PositionError(
            f"XGID {s!r}: dice must be '00', two digits 1-6, 'D', 'B' or 'R', got {dice_text!r}"
        )
    score1 = _xgid_int(parts[5], "score 1", s)
    score2 = _xgid_int(parts[6], "score 2", s)
    rules = _xgid_int(parts[7], "the rules field", s)
    length = _xgid_int(parts[8], "the match length", s)
    max_log = _xgid_int(parts[9], "the max cube", s) if len(parts) == 10 else None
    if max_log is not None and not 0 <= max_log <= 15:
        raise PositionError(f"XGID {s!r}: max cube must be 0..15 (log2), got {max_log}")
    if length < 0 or score1 < 0 or score2 < 0:
        raise PositionError(f"XGID {s!r}: match length and scores cannot be negative")
    if not 0 <= rules <= (1 if length else 3):
        raise PositionError(
            f"XGID {s!r}: rules field {rules} is invalid "
            f"({'0/1 Crawford in a match' if length else '0..3 Jacoby + 2*beaver in money'})"
        )
    board = tuple(bottom) if turn == 1 else flip_board(bottom)
    cube_owner: CubeOwner = "centered" if owner == 0 else "mover" if owner == turn else "opponent"
    return XGIDInfo(
        board=board,
        cube_value=1 << cube_log,
        cube_owner=cube_owner,
        turn=turn,
        dice=dice,
        cube_action=action,
        score=(score1, score2) if turn == 1 else (score2, score1),
        match_length=length,
        crawford=bool(rules) if length else False,
        jacoby=bool(rules & 1) if not length else False,
        beaver=bool(rules & 2) if not length else False,
        max_cube=_DEFAULT_MAX_CUBE if max_log is None else 1 << max_log,
    )
