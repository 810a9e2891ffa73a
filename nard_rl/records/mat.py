"""Reading Jellyfish ``.mat`` text, as GNU Backgammon, eXtreme Gammon and
``nard_rl.engine.matfile`` write it (the layout is described there).

The reader does not trust column widths to the character (programs differ), only the
layout: a numbered row holds player 0's action and then player 1's; an action that
starts far to the right (past ``RIGHT_COLUMN``) is player 1's when it stands alone.
Every token must be understood: an unknown word is an error naming the game, the row
and the text, never skipped.
"""

from __future__ import annotations

import itertools
import re

from nard_rl.records.model import Action, GameRecord, MatchRecord, RecordError

RIGHT_COLUMN = 20
"""A lone action starting at or after this column is in the right (player 1) column:
gnubg and this project start it at column 33, the left one at 5 or 6."""

_LENGTH = re.compile(r"^\s*(\d+)\s+point\s+match\s*$", re.IGNORECASE)
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$", re.IGNORECASE)
_PLAYERS = re.compile(
    r"^\s*(.+?)\s*:\s*(\d+)(?:\s*\(.*?\))?\s+(.+?)\s*:\s*(\d+)(?:\s*\(.*?\))?\s*$"
)
_ROW = re.compile(r"^(\s*(\d+)\)\s?)(.*)$")
_DICE = re.compile(r"^([1-6])([1-6]):$")
_STEP = re.compile(r"^(?:bar|\d+)(?:/(?:bar|off|\d+)\*?)+(?:\(\d\))?$", re.IGNORECASE)
_POINT_NAMES = {"bar": 25, "off": 0}


def _steps(parts: list[str], where: str) -> tuple[tuple[int, int], ...]:
    """``(from, to)`` steps of move parts (``13/8``, ``24/20*/16``, ``8/2(2)``, ``bar/22``)."""
    steps: list[tuple[int, int]] = []
    for part in parts:
        count = 1
        text = part.lower()
        if text.endswith(")"):
            text, _, n = text[:-1].partition("(")
            count = int(n)
        points = [_POINT_NAMES.get(p) for p in text.replace("*", "").split("/")]
        values: list[int] = []
        for name, value in zip(text.replace("*", "").split("/"), points, strict=True):
            v = value if value is not None else int(name)
            if not 0 <= v <= 25:
                raise RecordError(f"{where}: point {name} out of range in {part!r}")
            values.append(v)
        for a, b in itertools.pairwise(values):
            steps.extend([(a, b)] * count)
    return tuple(steps)


def _actions(text: str, start_col: int, number: int, where: str) -> list[tuple[int, Action]]:
    """The actions of one row's text (``start_col``: where ``text`` starts in the line),
    each with the column it starts at; players are assigned by the caller."""
    tokens = [(m.start() + start_col, m.group()) for m in re.finditer(r"\S+", text)]
    out: list[tuple[int, Action]] = []
    i = 0
    while i < len(tokens):
        col, tok = tokens[i]
        low = tok.lower()
        dice = _DICE.match(tok)
        if dice:
            j = i + 1
            while j < len(tokens) and _STEP.match(tokens[j][1]):
                j += 1
            parts = [t for _, t in tokens[i + 1 : j]]
            phrase = " ".join(t.lower() for _, t in tokens[j : j + 2])
            if not parts and phrase in ("cannot move", "can't move", "no move"):
                j += 2  # how some programs write a roll without a play
            d = (int(dice.group(1)), int(dice.group(2)))
            shown = " ".join([tok, *parts])
            steps = _steps(parts, f"{where}, move {number} ({shown!r})")
            out.append((col, Action("move", -1, number, shown, d, steps)))
            i = j
        elif low == "doubles":
            if i + 2 >= len(tokens) or tokens[i + 1][1] != "=>" or not tokens[i + 2][1].isdigit():
                raise RecordError(f"{where}, move {number}: cannot read {text.strip()!r}")
            value = int(tokens[i + 2][1])
            out.append((col, Action("double", -1, number, f"Doubles => {value}", value=value)))
            i += 3
        elif low in ("takes", "accepts"):
            out.append((col, Action("take", -1, number, tok)))
            i += 1
        elif low in ("drops", "passes", "rejects"):
            out.append((col, Action("drop", -1, number, tok)))
            i += 1
        elif low == "wins":
            if i + 1 >= len(tokens) or not tokens[i + 1][1].isdigit():
                raise RecordError(f"{where}, move {number}: cannot read {text.strip()!r}")
            value = int(tokens[i + 1][1])
            i += 2
            if i < len(tokens) and tokens[i][1].lower() in ("point", "points"):
                i += 1
            if i < len(tokens) and tokens[i][1].lower() == "and":  # "Wins 2 points and the match"
                i = len(tokens)
            out.append((col, Action("win", -1, number, f"Wins {value}", value=value)))
        else:
            raise RecordError(
                f"{where}, move {number}: cannot read {tok!r} in {text.strip()!r} "
                "(expected dice like '52:', move steps like '13/8', 'Doubles => 2', "
                "'Takes', 'Drops' or 'Wins N points')"
            )
    return out


def parse_mat(text: str, source: str = "<text>") -> MatchRecord:
    """A ``.mat`` text as a ``MatchRecord`` (actions as written; ``replay`` checks them)."""
    length: int | None = None
    games: list[GameRecord] = []
    names: tuple[str, str] | None = None
    game: GameRecord | None = None
    expect_players = False
    last_number = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(";") or stripped.startswith("#"):
            continue
        if length is None and (m := _LENGTH.match(line)):
            length = int(m.group(1))
            continue
        if m := _GAME.match(line):
            game = GameRecord(int(m.group(1)))
            games.append(game)
            expect_players = True
            last_number = 0
            continue
        where = f"{source}: game {game.number if game else '?'}"
        if game is None:
            if stripped.lower().startswith(("money", "unlimited")):
                length = 0
                continue
            raise RecordError(
                f"{source}: line {lineno}: expected 'N point match' or 'Game 1', "
                f"got {stripped[:80]!r}: not a .mat match file"
            )
        if expect_players:
            m = _PLAYERS.match(line)
            if not m:
                raise RecordError(
                    f"{where}: line {lineno}: expected the two players and their scores "
                    f"('Alice : 0   Bob : 0'), got {stripped[:80]!r}"
                )
            pair = (m.group(1).strip(), m.group(3).strip())
            if any(":" in name for name in pair):
                raise RecordError(
                    f"{where}: line {lineno}: a game is between two players, got {stripped[:80]!r}"
                )
            if names is None:
                names = pair
            elif pair != names:
                raise RecordError(f"{where}: players {pair} differ from game 1's {names}")
            game.score = (int(m.group(2)), int(m.group(4)))
            expect_players = False
            continue
        row = _ROW.match(line)
        if row:
            number = int(row.group(2))
            if number != last_number + 1:
                raise RecordError(f"{where}: move {number} follows move {last_number}")
            last_number = number
            body, start = row.group(3), len(row.group(1))
        else:
            number, body, start = last_number + 1, line, 0
        acts = _actions(body, start, number, where)
        if not acts:
            continue
        if len(acts) > 2:
            raise RecordError(f"{where}, move {number}: more than two actions in {stripped!r}")
        players = [0, 1] if len(acts) == 2 else [1 if acts[0][0] >= RIGHT_COLUMN else 0]
        if not row and any(a.kind != "win" for _, a in acts):
            raise RecordError(f"{where}: line {lineno}: a row without a move number: {stripped!r}")
        for (_, act), player in zip(acts, players, strict=True):
            game.actions.append(
                Action(act.kind, player, act.number, act.text, act.dice, act.steps, act.value)
            )
    if length is None:
        raise RecordError(f"{source}: no 'N point match' line: not a .mat match file")
    if not games:
        raise RecordError(f"{source}: no games ('Game 1' line) in the file")
    assert names is not None or not games[0].actions
    return MatchRecord(length, names or ("Player 1", "Player 2"), games, source, "mat")
