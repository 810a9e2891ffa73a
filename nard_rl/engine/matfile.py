"""Export games and matches as Jellyfish ``.mat`` text, the plain match format that GNU
Backgammon and most backgammon software import.

The layout, as other programs write and read it::

     7 point match

     Game 1
     Alice : 0                      Bob : 0
      1) 52: 13/11 13/8              64: 24/18 13/9
      2)  Doubles => 2                Takes
      3) 63:                         55: 13/8 13/8 8/3 8/3
          Wins 1 point

* A money session is written as a ``0 point match``.
* The left column is player 0, the right column player 1; each column holds that
  player's actions in turn, so the columns simply alternate: a move (``dice: steps``, an
  empty list of steps for a roll without a play), `` Doubles => n``, `` Takes``,
  `` Drops``, and the winner's `` Wins n point(s)`` (the points of the game, before a
  match caps the score).  A line holding only the win is not numbered.
* Every checker step is written alone, ``from/to`` in the mover's own numbering (25 the
  bar, 0 off), ``*`` marking a hit: the same numbering as the engine's, so nothing is
  converted.  The higher die comes first.
* The format has no notation for resignations, timeouts, declined resignations or
  automatic doubles: a game that ends without a bear-off or a drop just ends with the
  winner's ``Wins`` line.
"""

from __future__ import annotations

from collections.abc import Sequence

from nard_rl.engine.game import (
    Double,
    Drop,
    Event,
    Game,
    GameOver,
    Match,
    Move,
    NoPlay,
    Take,
    running_scores,
)

_CELL = 28  # width of the left column after the move number
_NUMBER = 5  # width of "nnn) "
_HEADER = 32  # column where the second player's name starts in a game header


def _dice_text(dice: tuple[int, int]) -> str:
    return f"{max(dice)}{min(dice)}:"


def _cell(event: Event) -> tuple[int, str] | None:
    """The column (player) and text of one record event, or None if it has no notation."""
    if isinstance(event, Move):
        steps = " ".join(f"{s.src}/{s.dst}{'*' if s.hit else ''}" for s in event.steps)
        return event.player, f"{_dice_text(event.dice)} {steps}"
    if isinstance(event, NoPlay):
        return event.player, _dice_text(event.dice)
    if isinstance(event, Double):
        return event.player, f" Doubles => {event.cube}"
    if isinstance(event, Take):
        return event.player, " Takes"
    if isinstance(event, Drop):
        return event.player, " Drops"
    if isinstance(event, GameOver):
        points = event.result.points
        return event.result.winner, f" Wins {points} point{'s' if points != 1 else ''}"
    return None


def game_lines(game: Game) -> list[str]:
    """The numbered action lines of one game (without its header)."""
    rows: list[list[str]] = []
    wins_only: list[bool] = []
    slot = 0  # next free cell: row slot // 2, column slot % 2
    for event in game.record:
        cell = _cell(event)
        if cell is None:
            continue
        column, text = cell
        if slot % 2 != column:
            slot += 1
        if slot // 2 == len(rows):
            rows.append(["", ""])
            wins_only.append(True)
        rows[slot // 2][column] = text
        if not isinstance(event, GameOver):
            wins_only[slot // 2] = False
        slot += 1
    lines: list[str] = []
    number = 0
    for (left, right), only_win in zip(rows, wins_only, strict=True):
        if only_win:
            prefix = " " * _NUMBER
        else:
            number += 1
            prefix = f"{number:3d}) "
        # A long left cell (four steps with hits) overflows; a space still separates.
        lines.append((prefix + left.ljust(_CELL - 1) + " " + right).rstrip())
    return lines


def export_mat(
    match_or_games: Match | Sequence[Game], names: tuple[str, str] = ("Player 1", "Player 2")
) -> str:
    """A match (or a list of games of one money session or match) as ``.mat`` text."""
    if isinstance(match_or_games, Match):
        games: Sequence[Game] = match_or_games.games
        length = match_or_games.length
    else:
        games = list(match_or_games)
        lengths = {g.match_length for g in games}
        if len(lengths) > 1:
            raise ValueError("the games belong to matches of different lengths")
        length = lengths.pop() if lengths else 0
    for name in names:
        if not name or ":" in name or "\n" in name:
            raise ValueError(f"player names must be non-empty without ':' ({name!r})")
    scores = running_scores(games, length)
    out = [f" {length} point match", ""]
    for index, game in enumerate(games):
        s0, s1 = scores[index]
        out.append(f" Game {index + 1}")
        out.append(f" {names[0]} : {s0}".ljust(_HEADER) + f"{names[1]} : {s1}")
        out.extend(game_lines(game))
        out.append("")
    return "\n".join(out) + "\n"
