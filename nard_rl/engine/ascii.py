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

A game in progress is drawn from one seat all game long (a player wants their own side at
the bottom even while the opponent rolls): ``render_table`` draws a ``Table``, the view of
one seat (``table_view`` builds it from an engine ``Game``), with the side notes a player
at a real table sees: who is on roll and the dice, a double waiting for its answer, the
cube's value and owner, the match score and the Crawford game, the pip counts, both
clocks under the mars rules (R30) and the last action.  Its Position ID is gnubg's (the
side on roll's view), so it can be pasted into any analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nard_rl.engine.ids import MatchInfo, encode_match_id, encode_position_id
from nard_rl.engine.position import Position

if TYPE_CHECKING:
    from nard_rl.engine.game import Game

__all__ = ["HOME_SIDES", "Table", "clock_text", "render_board", "render_table", "table_view"]

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

    header = [f"{'':17}Position ID: {encode_position_id(b)}"]
    if match is not None:
        header.append(f"{'':17}Match ID   : {encode_match_id(match)}")
    return _diagram(
        position, header, top_notes, bottom_notes, middle_note, cube_tag, names, left_home
    )


def _diagram(
    position: Position,
    header: list[str],
    top_notes: list[str],
    bottom_notes: list[str],
    middle_note: str,
    cube_tag: dict[str, str],
    names: tuple[str, str],
    left_home: bool,
) -> str:
    """The board itself between ``header`` and the notes right of it (rows from the edge)."""
    b = position.board
    off_mover, off_opp = position.checkers_off()
    lines = list(header)
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


# --------------------------------------------------------------------------------------
# a game in progress, seen from one seat

Side = Literal["viewer", "opponent"]


@dataclass(frozen=True)
class Table:
    """A game in progress as one seat (the *viewer*, drawn at the bottom) sees it.

    ``board`` is from the viewer's view whoever is on roll; ``on_roll`` is the side whose
    turn it is and ``dice`` its roll once thrown; ``doubled`` says the side on roll has
    offered a double that the other side must take or pass.  ``cube`` is False for rule
    sets without one (R28).  ``score`` is (viewer, opponent); ``clock`` the (turn time,
    reserve) left to each, in seconds (R30), or None without a clock.  ``position_id``
    is gnubg's ID of the position (side on roll's view); ``last`` a line about the last
    action (``bot rolled 5-3: 13/8 24/21``)."""

    board: tuple[int, ...]
    on_roll: Side
    dice: tuple[int, int] | None = None
    doubled: bool = False
    cube: bool = True
    cube_value: int = 1
    cube_owner: Literal["centered", "viewer", "opponent"] = "centered"
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    clock: tuple[tuple[float, float], tuple[float, float]] | None = None
    position_id: str | None = None
    last: str | None = None


def clock_text(turn: float, reserve: float) -> str:
    """``11s + 1:30``: turn time, then the reserve as minutes:seconds (R30)."""
    left = int(max(reserve, 0.0))
    return f"{turn:.0f}s + {left // 60}:{left % 60:02d}"


def table_view(
    game: Game,
    viewer: int,
    *,
    score: tuple[int, int] = (0, 0),
    last: str | None = None,
) -> Table:
    """The ``Table`` of an engine ``Game`` from player ``viewer``'s seat; ``score`` is the
    match score before this game from the viewer's side (the ``Game`` does not know it)."""
    from nard_rl.engine.game import Phase

    def side(player: int) -> Side:
        return "viewer" if player == viewer else "opponent"

    owner: Literal["centered", "viewer", "opponent"] = "centered"
    if game.cube_owner is not None:
        owner = side(game.cube_owner)
    clock = None
    if game.has_clock:
        clock = (game.time_left(viewer), game.time_left(1 - viewer))
    return Table(
        board=game.position_for(viewer).board,
        on_roll=side(game.player_on_roll),
        dice=game.dice if game.phase is Phase.MOVE else None,
        doubled=game.phase is Phase.TAKE_OR_DROP,
        cube=game.rules.cube,
        cube_value=game.cube_value,
        cube_owner=owner,
        match_length=game.match_length,
        score=score,
        crawford=game.crawford,
        clock=clock,
        position_id=game.position.position_id(),
        last=last,
    )


def render_table(table: Table, *, names: tuple[str, str] = ("X", "O"), home: str = "right") -> str:
    """The diagram of a ``Table``: the viewer (``X``, ``names[0]``) at the bottom whoever
    is on roll, with the notes of the game in progress beside each side."""
    if home not in HOME_SIDES:
        raise ValueError(f"home must be one of {', '.join(HOME_SIDES)}, got {home!r}")
    position = Position(table.board)
    pips = dict(zip(("viewer", "opponent"), position.pip_counts(), strict=True))
    notes = {"viewer": [""] * _ROWS, "opponent": [""] * _ROWS}  # index 0 = the board's edge
    cube_tag = {"mover": "", "opponent": ""}
    tag_key = {"viewer": "mover", "opponent": "opponent"}
    other: Side = "opponent" if table.on_roll == "viewer" else "viewer"
    if table.match_length:
        notes["viewer"][0] = _points(table.score[0])
        notes["opponent"][0] = _points(table.score[1])
    if table.doubled:
        notes[table.on_roll][1] = f"Doubles to {2 * table.cube_value}"
        notes[other][1] = "To take or pass"
    elif table.dice is not None:
        notes[table.on_roll][1] = f"Rolled {table.dice[0]}{table.dice[1]}"
    else:
        notes[table.on_roll][1] = "On roll"
    for who in ("viewer", "opponent"):
        notes[who][2] = f"Pips: {pips[who]}"
    if table.clock is not None:
        for who, (turn, reserve) in zip(("viewer", "opponent"), table.clock, strict=True):
            notes[who][3] = f"Clock: {clock_text(turn, reserve)}"
    middle = [_points(table.match_length) + " match"] if table.match_length else ["money game"]
    if table.crawford:
        middle.append("(Crawford game)")
    elif not table.cube:
        middle.append("(no cube)")
    elif table.cube_owner == "centered":
        middle.append(f"(Cube: {table.cube_value})")
    else:
        cube_tag[tag_key[table.cube_owner]] = f" (Cube: {table.cube_value})"
    header = [f"{'':17}Position ID: {table.position_id or encode_position_id(position.board)}"]
    if table.last:
        header.insert(0, f" {table.last}")
    return _diagram(
        position,
        header,
        notes["opponent"],
        notes["viewer"],
        " ".join(middle),
        cube_tag,
        names,
        home == "left",
    )
