"""The records' data: actions as a file states them, and the games the engine replayed.

Players are 0 and 1 as in the engine: player 0 is the left column of a ``.mat`` file and
gnubg's White (``W``) in an ``.sgf`` file, player 1 the right column and Black (``B``).
Checker steps are ``(from, to)`` in the mover's own numbering (25 the bar, 0 off), the
numbering both formats use once decoded, and the engine's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from nard_rl.engine.game import Event, Game
from nard_rl.engine.matfile import _cell as mat_cell

ActionKind = Literal["move", "double", "take", "drop", "win"]


class RecordError(ValueError):
    """A record that cannot be read or replayed; the message names the file, the game,
    the move number and the text where it went wrong."""


@dataclass(frozen=True)
class Action:
    """One action of a record.

    ``move``: ``dice`` and ``steps`` (empty when the roll could not be played); ``double``:
    ``value`` is the cube offered; ``take``/``drop``: the answer; ``win``: the file's
    statement that ``player`` won ``value`` points (the end of a game without a bear-off
    or a drop is a resignation).  ``number`` is the move number of the file (the row of a
    ``.mat`` file), ``text`` the action as written, for error messages.
    """

    kind: ActionKind
    player: int
    number: int
    text: str
    dice: tuple[int, int] | None = None
    steps: tuple[tuple[int, int], ...] = ()
    value: int = 0


@dataclass
class GameRecord:
    """One game as the file states it: the score before it (when the file says) and its
    actions in order."""

    number: int
    actions: list[Action] = field(default_factory=list)
    score: tuple[int, int] | None = None


@dataclass
class MatchRecord:
    """A match (``length`` > 0) or money session (``length`` 0) as read from a file."""

    length: int
    names: tuple[str, str]
    games: list[GameRecord]
    source: str = "<text>"
    format: str = "mat"
    jacoby: bool | None = None
    """The Jacoby rule of a money session when the file says (gnubg's ``RU[Jacoby]``);
    None: unknown (the replay then finds out from the results)."""


@dataclass
class ReplayedGame:
    """One game rebuilt by the engine: ``game.record`` holds its typed events."""

    number: int
    game: Game
    score: tuple[int, int]
    """Score before the game (player 0, player 1), capped at the match length."""
    crawford: bool


@dataclass
class ReplayedMatch:
    length: int
    names: tuple[str, str]
    games: list[ReplayedGame]
    source: str = "<games>"
    jacoby: bool = False


class MoveNumbers:
    """The ``.mat`` numbering of a game's actions: each numbered row holds one action of
    player 0 (left) and then one of player 1 (right), so an action opens a new row when
    its player's cell in the current row is taken or already behind.  A row holding only
    the final win is not numbered.  Fed one action at a time, by parsers (which number
    what they read) and by the analysis (which numbers the engine's record), so the same
    game gets the same numbers whatever its source."""

    def __init__(self) -> None:
        self._slot = 0

    def next(self, player: int) -> int:
        if self._slot % 2 != player:
            self._slot += 1
        number = self._slot // 2 + 1
        self._slot += 1
        return number


def event_numbers(record: Iterable[Event]) -> list[int | None]:
    """The move number of each engine event (None for events with no ``.mat`` notation:
    rolls, opening throws, resignation offers), by ``MoveNumbers`` over the cells the
    project's ``.mat`` export writes."""
    numbers = MoveNumbers()
    out: list[int | None] = []
    for event in record:
        cell = mat_cell(event)
        out.append(None if cell is None else numbers.next(cell[0]))
    return out
