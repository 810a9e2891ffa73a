"""The immutable position value type, always seen from the side on roll.

The canonical form is the 26-integer JSON board shared by every CLI and API (the
pubeval / wildbg convention):

* ``board[1..24]``: points numbered from the mover's home (point 1 is the mover's ace
  point, R3); positive counts are the mover's checkers, negative the opponent's.
* ``board[25]``: the mover's checkers on the bar (>= 0).
* ``board[0]``: minus the opponent's checkers on the bar (<= 0).
* Borne-off checkers are implied: 15 minus the checkers on board and bar.

Seeing the position from the other side is ``flip(b)[i] = -b[25 - i]``, which is all it
takes to hand the turn over, so every layer above the engine (encodings, networks,
players) only ever reasons about "the side on roll".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from nard_rl.engine.rules import RuleSet

BOARD_SIZE = 26
CHECKERS = 15
START_BOARD: tuple[int, ...] = (
    0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0,
)  # fmt: skip


class PositionError(ValueError):
    """A board that cannot occur in a game, with the reason in the message."""


def _as_int(v: object) -> int:
    """One board entry as an int; whole-valued floats pass, anything else is named."""
    if type(v) is int:  # the common case first: boards parsed from JSON or lists
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise PositionError(f"board entries must be integers, got {v!r}")
    if isinstance(v, (float, np.floating)) and not (math.isfinite(v) and float(v).is_integer()):
        raise PositionError(f"board entries must be whole numbers, got {v!r}")
    return int(v)


def validate_board(board: Sequence[int]) -> tuple[int, ...]:
    """Return ``board`` as a tuple of ints, or raise ``PositionError`` naming the problem."""
    try:
        items = list(board)
    except TypeError:
        raise PositionError("board must be a list of 26 integers") from None
    values = tuple(_as_int(v) for v in items)
    if len(values) != BOARD_SIZE:
        raise PositionError(f"board must have 26 entries, got {len(values)}")
    if values[25] < 0:
        raise PositionError(f"board[25] is the mover's bar and cannot be negative ({values[25]})")
    if values[0] > 0:
        raise PositionError(
            f"board[0] is minus the opponent's bar and cannot be positive ({values[0]})"
        )
    mover = values[25] + sum(v for v in values[1:25] if v > 0)
    opp = -values[0] - sum(v for v in values[1:25] if v < 0)
    if mover > CHECKERS:
        raise PositionError(f"the mover has {mover} checkers on board and bar, more than 15")
    if opp > CHECKERS:
        raise PositionError(f"the opponent has {opp} checkers on board and bar, more than 15")
    if mover == 0 and opp == 0:
        raise PositionError("both sides have already borne off all their checkers")
    return values


def validate_boards(boards: object, n: int | None = None) -> np.ndarray:
    """``(N, 26)`` int8 copy of a batch of boards, or ``PositionError`` naming the first bad
    row and its problem (``validate_board``'s checks, vectorised).

    The check every public entry that takes boards from outside (environment resets,
    batch steppers) runs, so that a malformed board is refused by name instead of
    reaching the compiled move generator.  ``n`` requires exactly that many rows.
    """
    try:
        arr = np.asarray(boards)
    except (TypeError, ValueError):
        raise PositionError("boards must be an (N, 26) array of integers") from None
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != BOARD_SIZE:
        raise PositionError(f"boards must have shape (N, 26), got {np.shape(boards)}")
    if n is not None and arr.shape[0] != n:
        raise PositionError(f"expected {n} boards, got {arr.shape[0]}")
    if arr.dtype.kind == "f":
        if not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
            raise PositionError("board entries must be whole numbers")
    elif arr.dtype.kind not in "iu":
        raise PositionError(f"board entries must be integers, got dtype {arr.dtype}")
    wide = arr.astype(np.int64)
    mover = wide[:, 25] + np.where(wide[:, 1:25] > 0, wide[:, 1:25], 0).sum(axis=1)
    opp = -wide[:, 0] - np.where(wide[:, 1:25] < 0, wide[:, 1:25], 0).sum(axis=1)
    bad = (
        (wide[:, 25] < 0)
        | (wide[:, 0] > 0)
        | (mover > CHECKERS)
        | (opp > CHECKERS)
        | ((mover == 0) & (opp == 0))
    )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        try:
            validate_board(wide[i].tolist())
        except PositionError as exc:
            raise PositionError(f"board {i}: {exc}") from None
    return wide.astype(np.int8)


class Play(NamedTuple):
    """One legal play: its notation and the resulting position, still from the mover."""

    move: str
    board: tuple[int, ...]


class Position:
    """An immutable position seen from the side on roll (see the module docstring).

    Cheap to copy, hash and flip; built from and printed as its IDs
    (``Position.from_id`` / ``position_id``; XGID via ``nard_rl.engine.ids``).
    """

    __slots__ = ("_board",)

    def __init__(self, board: Iterable[int], *, validate: bool = True) -> None:
        values = tuple(board)
        self._board: tuple[int, ...] = validate_board(values) if validate else values

    # construction -------------------------------------------------------------
    @classmethod
    def start(cls) -> Position:
        """The opening position (R4)."""
        return cls(START_BOARD, validate=False)

    @classmethod
    def from_array(cls, arr: np.ndarray) -> Position:
        return cls(arr.tolist())

    @classmethod
    def from_id(cls, position_id: str) -> Position:
        """Decode a GNUBG Position ID (the player on roll is the mover)."""
        from nard_rl.engine.ids import decode_position_id

        return cls(decode_position_id(position_id))

    # views ---------------------------------------------------------------------
    @property
    def board(self) -> tuple[int, ...]:
        return self._board

    def to_list(self) -> list[int]:
        return list(self._board)

    def array(self) -> np.ndarray:
        return np.array(self._board, dtype=np.int8)

    def flip(self) -> Position:
        """The same position seen by the other player."""
        return Position(flip_board(self._board), validate=False)

    def position_id(self) -> str:
        from nard_rl.engine.ids import encode_position_id

        return encode_position_id(self._board)

    # facts ----------------------------------------------------------------------
    def checkers_off(self) -> tuple[int, int]:
        """Borne-off counts ``(mover, opponent)``."""
        b = self._board
        mover = b[25] + sum(v for v in b[1:25] if v > 0)
        opp = -b[0] - sum(v for v in b[1:25] if v < 0)
        return CHECKERS - mover, CHECKERS - opp

    def pip_counts(self) -> tuple[int, int]:
        """Pips still to travel ``(mover, opponent)``; the bar counts 25."""
        b = self._board
        mover = 25 * b[25] + sum(p * b[p] for p in range(1, 25) if b[p] > 0)
        opp = 25 * -b[0] + sum((25 - p) * -b[p] for p in range(1, 25) if b[p] < 0)
        return mover, opp

    def is_race(self) -> bool:
        """No contact left: every mover checker is past every opponent checker
        (``engine.classify``, the one contact test)."""
        from nard_rl.engine.classify import race_flags

        return bool(race_flags(np.array(self._board, dtype=np.int8)[None, :])[0])

    def winner(self) -> int | None:
        """``0`` when the mover has borne everything off, ``1`` for the opponent, else None."""
        off_m, off_o = self.checkers_off()
        if off_m == CHECKERS:
            return 0
        if off_o == CHECKERS:
            return 1
        return None

    def plays(self, d1: int, d2: int, rules: RuleSet | str = "standard") -> list[Play]:
        """Every legal play for the roll (R8-R20, R29 under mars), one per afterstate."""
        from nard_rl.engine.movegen import legal_afterstates
        from nard_rl.engine.movetext import format_plays
        from nard_rl.engine.rules import get_rules

        ruleset = get_rules(rules)
        for d in (d1, d2):
            if not 1 <= int(d) <= 6:
                raise PositionError(f"dice must be in 1..6, got {d}")
        afters, steps = legal_afterstates(self.array(), int(d1), int(d2), ruleset.waste_rule)
        moves = format_plays(self._board, steps)
        return [Play(m, tuple(a)) for m, a in zip(moves, afters.tolist(), strict=True)]

    # dunder -----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and other._board == self._board

    def __hash__(self) -> int:
        return hash(self._board)

    def __repr__(self) -> str:
        return f"Position({list(self._board)})"


def flip_board(board: Sequence[int]) -> tuple[int, ...]:
    """One board seen by the other side: ``flip(b)[i] = -b[25 - i]`` (module docstring)."""
    return tuple(-int(board[25 - i]) for i in range(BOARD_SIZE))


def flip_boards(boards: np.ndarray) -> np.ndarray:
    """Flip a batch ``(N, 26)`` of boards to the other side's view (vectorised); the
    array twin of ``flip_board``, the one flip every layer uses."""
    return np.ascontiguousarray(-boards[:, ::-1])


def apply_steps(
    board: Sequence[int], steps: Iterable[Sequence[int]]
) -> tuple[tuple[tuple[int, int, bool], ...], tuple[int, ...]]:
    """Play single-die steps ``(from, to)`` on a board (25 the bar, 0 or less off).

    Returns the steps in canonical order with their hits (R10) marked, as
    ``(from, to, hit)``, and the resulting board.  Steps are played from the highest
    source point down: that order is always playable (the bar first, R11; a checker lands
    only below where it came from; moving higher checkers first only helps bearing off,
    R18/R20), so records, notation and exports never depend on the order a generator or
    a player happened to give.  Legality is the move generator's business; a step from a
    point without a checker of the mover raises ``PositionError``.
    """
    b = [int(v) for v in board]
    if len(b) != BOARD_SIZE:
        raise PositionError(f"board must have 26 entries, got {len(b)}")
    out: list[tuple[int, int, bool]] = []
    pairs = [(int(st[0]), int(st[1])) for st in steps]
    for src, dst in sorted(pairs, key=lambda st: (-st[0], -st[1])):
        if not 1 <= src <= 25 or dst > 24 or dst >= src or b[src] <= 0:
            raise PositionError(f"step {src}/{dst} does not move a checker of the mover")
        hit = dst >= 1 and b[dst] == -1
        b[src] -= 1
        if hit:
            b[dst] = 0
            b[0] -= 1
        if dst >= 1:
            b[dst] += 1
        out.append((src, dst, hit))
    return tuple(out), tuple(b)
