"""A text diagram of a position in the layout of GNU Backgammon's ``show board``.

Players of gnubg read this diagram at a glance, so the layout follows it: the mover
(``X``) at the bottom with points 12..1 along the bottom edge and its home board at
the bottom right, the opponent (``O``) on top with the mover's points 13..24; stacks
grow from the edge and show their count on the fifth row when taller than five; the
bar column holds each side's hit checkers on its own half; the borne-off checkers sit
in a tray right of the board, five per column; the Position ID (and Match ID, when a
match state is given) head the diagram and the side notes carry scores, the roll,
the cube and the pip counts.

The diagram is always drawn from the mover's view (our board format, R3), so the
side on roll is always at the bottom.  ``home="left"`` mirrors the board left to right
(the mover's home board bottom left, points 1..12 along the bottom edge): R30 lets a
player choose that side, and it is display only.
"""

from __future__ import annotations

from collections.abc import Sequence

from nard_rl.engine.ids import MatchInfo, encode_match_id, encode_position_id
from nard_rl.engine.position import Position

__all__ = ["HOME_SIDES", "render_board"]

HOME_SIDES = ("right", "left")
"""Where the mover's home board is drawn (R30: bottom right by default, or bottom left)."""

_TOP_LABELS = " +13-14-15-16-17-18------19-20-21-22-23-24-+"
_BOTTOM_LABELS = " +12-11-10--9--8--7-------6--5--4--3--2--1-+"
_TOP_LABELS_LEFT = " +24-23-22-21-20-19------18-17-16-15-14-13-+"
_BOTTOM_LABELS_LEFT = " +-1--2--3--4--5--6-------7--8--9-10-11-12-+"
_MIDDLE = "v|                  |BAR|                  |"
_ROWS = 5  # checkers drawn per stack before the count takes the fifth place
_RESIGNATIONS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def _cell(count: int, row: int, glyph: str) -> str:
    """One 3-character point cell on ``row`` (0 = the board's edge) of a stack."""
    if count <= row:
        return "   "
    if row == _ROWS - 1 and count > _ROWS:
        return f" {count:<2}"
    return f" {glyph} "


def _quarter(board: Sequence[int], points: range, row: int) -> str:
    """Six point cells of one quarter, in the order the diagram shows them."""
    return "".join(
        _cell(-board[p], row, "O") if board[p] < 0 else _cell(board[p], row, "X") for p in points
    )


def _tray(count: int, row: int, glyph: str) -> str:
    """Row ``row`` of the borne-off tray: columns of five, filled from the edge."""
    in_row = sum(1 for column in range(3) if column * _ROWS + row < count)
    return (glyph * in_row).ljust(3)


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def render_board(
    board: Sequence[int] | Position,
    *,
    match: MatchInfo | None = None,
    names: tuple[str, str] = ("X", "O"),
    home: str = "right",
) -> str:
    """The diagram of ``board`` (mover's view), with the match state's notes if given.

    ``names`` are the labels of the mover and of the opponent; the checkers are always
    drawn as ``X`` for the mover and ``O`` for the opponent.  ``home`` is the side of the
    mover's home board, ``"right"`` (gnubg's layout) or ``"left"`` (R30, display only).
    """
    if home not in HOME_SIDES:
        raise ValueError(f"home must be one of {', '.join(HOME_SIDES)}, got {home!r}")
    left_home = home == "left"
    position = board if isinstance(board, Position) else Position(board)
    b = position.board
    pips_mover, pips_opp = position.pip_counts()
    off_mover, off_opp = position.checkers_off()

    top_notes = [""] * _ROWS  # index 0 = the row at the board's edge
    bottom_notes = [""] * _ROWS
    middle_note = ""
    cube_tag = {"mover": "", "opponent": ""}
    bottom_notes[1] = "On roll"
    if match is not None:
        top_notes[0] = _points(match.score[1])
        bottom_notes[0] = _points(match.score[0])
        if match.dice != (0, 0):
            bottom_notes[1] = f"Rolled {match.dice[0]}{match.dice[1]}"
        if match.double_offered:
            bottom_notes[1] = f"Doubles to {2 * match.cube_value}"
            top_notes[1] = "To take or pass"
        if match.resignation:
            resigner = bottom_notes if match.turn != match.player_on_roll else top_notes
            resigner[3] = f"Resigns {_RESIGNATIONS[match.resignation]}"
        notes = [_points(match.match_length) + " match"] if match.match_length else []
        if match.crawford:
            notes.append("(Crawford game)")
        elif match.cube_owner == "centered":
            notes.append(f"(Cube: {match.cube_value})")
        else:
            cube_tag[match.cube_owner] = f" (Cube: {match.cube_value})"
        middle_note = " ".join(notes)
    top_notes[2] = f"Pips: {pips_opp}"
    bottom_notes[2] = f"Pips: {pips_mover}"

    lines = [f"{'':17}Position ID: {encode_position_id(b)}"]
    if match is not None:
        lines.append(f"{'':17}Match ID   : {encode_match_id(match)}")
    top_labels, bottom_labels = _TOP_LABELS, _BOTTOM_LABELS
    top_quarters, bottom_quarters = (
        (range(13, 19), range(19, 25)),
        (range(12, 6, -1), range(6, 0, -1)),
    )
    if left_home:
        top_labels, bottom_labels = _TOP_LABELS_LEFT, _BOTTOM_LABELS_LEFT
        top_quarters = (range(24, 18, -1), range(18, 12, -1))
        bottom_quarters = (range(1, 7), range(7, 13))
    lines.append(f"{top_labels}     O: {names[1]}{cube_tag['opponent']}")
    for row in range(_ROWS):
        left, right = _quarter(b, top_quarters[0], row), _quarter(b, top_quarters[1], row)
        bar, tray = _cell(-b[0], row, "O"), _tray(off_opp, row, "O")
        lines.append(f" |{left}|{bar}|{right}| {tray} {top_notes[row]}")
    lines.append(f"{_MIDDLE}     {middle_note}")
    for row in reversed(range(_ROWS)):
        left, right = _quarter(b, bottom_quarters[0], row), _quarter(b, bottom_quarters[1], row)
        bar, tray = _cell(b[25], row, "X"), _tray(off_mover, row, "X")
        lines.append(f" |{left}|{bar}|{right}| {tray} {bottom_notes[row]}")
    lines.append(f"{bottom_labels}     X: {names[0]}{cube_tag['mover']}")
    return "\n".join(line.rstrip() for line in lines)
