"""The text diagram: gnubg's layout, and every checker where the board says it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nard_rl.engine.ascii import render_board
from nard_rl.engine.ids import MatchInfo, decode_gnubg_id, encode_match_id, encode_position_id
from nard_rl.engine.position import START_BOARD, Position, PositionError

DATA = Path(__file__).parent / "data"

# GNU Backgammon 1.07, `set gnubgid <ID>` then `show board` (root = player 1 on roll at the
# bottom); trailing blanks stripped.
GNUBG_DIAGRAMS = {
    "BzwBzHAQzAUGfg:cInlAFAAGAAE": """\
 GNU Backgammon  Position ID: BzwBzHAQzAUGfg
                 Match ID   : cInlAFAAGAAE
 +13-14-15-16-17-18------19-20-21-22-23-24-+     O: gnubg
 | X     O     O    | O | X              O |     5 points
 |             O    | O | X              O |
 |             O    | O |                O |
 |             O    |   |                  |
 |                  |   |                  |
v|                  |BAR|                  |     7 points match (Cube: 1)
 |                  | 6 |                  |
 |                  | X |                  |
 | X                | X |                  |
 | X     X          | X | O     O          |     Rolled 31
 | X     X          | X | O  X  O          |     3 points
 +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: root""",
    "MAsAxn6CAAAMAA:UQngAAAAAAAE": """\
 GNU Backgammon  Position ID: MAsAxn6CAAAMAA
                 Match ID   : UQngAAAAAAAE
 +13-14-15-16-17-18------19-20-21-22-23-24-+     O: gnubg
 |             O  O | O |    O             |     0 points
 |                O | O |    O             |
 |                  | O |                  |
 |                  | O |                  |
 |                  | 6 |                  |
v|                  |BAR|                  |     7 points match
 |                  |   |                  | XX
 |                  |   |                  | XX
 |                  |   |                  | XX
 |                  | X |       O        O | XX  On roll
 |                X | X |       O     X  O | XXX 0 points
 +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: root (Cube: 2)""",
    "AMADjr8eACDMPQ:8AngAGAAEAAE": """\
 GNU Backgammon  Position ID: AMADjr8eACDMPQ
                 Match ID   : 8AngAGAAEAAE
 +13-14-15-16-17-18------19-20-21-22-23-24-+     O: gnubg
 |                X | O |          X     X | O   6 points
 |                  | O |          X     X |
 |                  | O |                X |
 |                  | O |                  |
 |                  | 7 |                  |
v|                  |BAR|                  |     7 points match (Crawford game)
 |                  |   |                  |
 |       O          | X |             X    |
 |       O          | X |          O  X    |
 |       O          | X |          O  X    |     On roll
 |       O          | X |          O  X  X |     2 points
 +12-11-10--9--8--7-------6--5--4--3--2--1-+     X: root""",
}


@pytest.mark.parametrize("gnubg_id", sorted(GNUBG_DIAGRAMS))
def test_same_layout_as_gnubg(gnubg_id: str) -> None:
    """Line for line gnubg's diagram, but for its program name and our pip counts."""
    board, match = decode_gnubg_id(gnubg_id)
    ours = render_board(board, match=match, names=("root", "gnubg")).splitlines()
    ours = [re.sub(r" *Pips: \d+$", "", line) for line in ours]
    theirs = GNUBG_DIAGRAMS[gnubg_id].replace(" GNU Backgammon  ", " " * 17).splitlines()
    assert ours == theirs


def _parse(diagram: str, with_match: bool) -> list[int]:
    """Read a board back from a diagram: the test's own reader of the layout."""
    lines = diagram.splitlines()
    first = 3 if with_match else 2
    top, bottom = lines[first : first + 5], lines[first + 6 : first + 11][::-1]

    def stack(rows: list[str], col: int) -> tuple[int, str]:
        cells = [row[col - 1 : col + 2].strip() for row in rows]
        glyphs = [c for c in cells if c]
        if not glyphs:
            return 0, ""
        if glyphs[-1].isdigit():
            assert glyphs[:-1] == [glyphs[0]] * 4 and len(glyphs) == 5
            return int(glyphs[-1]), glyphs[0]
        assert glyphs == [glyphs[0]] * len(glyphs) and cells[: len(glyphs)] == glyphs
        return len(glyphs), glyphs[0]

    board = [0] * 26
    columns = [3 + 3 * k for k in range(6)] + [26 + 3 * k for k in range(6)]
    for rows, points in ((top, list(range(13, 25))), (bottom, [*range(12, 0, -1)])):
        for col, point in zip(columns, points, strict=True):
            count, glyph = stack(rows, col)
            board[point] = count if glyph == "X" else -count
    opp_bar, glyph = stack(top, 22)
    assert glyph in ("", "O")
    mover_bar, glyph = stack(bottom, 22)
    assert glyph in ("", "X")
    board[0], board[25] = -opp_bar, mover_bar
    off_top = sum(row[45:48].count("O") for row in top)
    off_bottom = sum(row[45:48].count("X") for row in bottom)
    assert (off_bottom, off_top) == Position(board).checkers_off()
    return board


def _reference_boards(per_file: int = 600) -> list[list[int]]:
    boards = []
    for name in ("gnubg_ids.jsonl", "movegen_gnubg_public.jsonl"):
        with (DATA / name).open() as fh:
            boards += [rec["board"] for rec in map(json.loads, fh) if "board" in rec][:per_file]
    return boards


def test_every_checker_is_drawn_where_it_stands() -> None:
    boards = _reference_boards()
    assert len(boards) >= 900
    assert any(max(abs(v) for v in b) >= 10 for b in boards)  # two-digit stacks covered
    for board in boards:
        assert _parse(render_board(board), with_match=False) == board, board


def test_start_position_without_match() -> None:
    lines = render_board(START_BOARD).splitlines()
    assert len(lines) == 14
    assert lines[0].split() == ["Position", "ID:", "4HPwATDgc/ABMA"]
    assert lines[1].startswith(" +13-14-15-16-17-18------19-20-21-22-23-24-+")
    assert lines[-1].startswith(" +12-11-10--9--8--7-------6--5--4--3--2--1-+")
    assert lines[7].startswith("v|                  |BAR|                  |")
    assert "Match ID" not in "\n".join(lines)
    assert sum("Pips: 167" in line for line in lines) == 2  # 2*24 + 5*13 + 3*8 + 5*6
    assert "On roll" in lines[-3]
    assert render_board(Position.start()) == render_board(START_BOARD)


def test_match_notes() -> None:
    match = MatchInfo(cube_value=4, cube_owner="opponent", match_length=5, score=(1, 3),
                      dice=(2, 5))  # fmt: skip
    text = render_board(START_BOARD, match=match, names=("Ann", "Bob"))
    lines = text.splitlines()
    assert lines[0].endswith(encode_position_id(START_BOARD))
    assert lines[1].endswith(encode_match_id(match))
    assert lines[2].endswith("O: Bob (Cube: 4)") and lines[-1].endswith("X: Ann")
    assert lines[3].endswith("3 points") and lines[-2].endswith("1 point")
    assert lines[-3].endswith("Rolled 52")
    assert lines[8].endswith("5 points match")

    offered = render_board(START_BOARD, match=MatchInfo(cube_value=2, double_offered=True, turn=0))
    assert "Doubles to 4" in offered and "To take or pass" in offered
    assert "(Cube: 2)" in offered
    resigned = render_board(START_BOARD, match=MatchInfo(resignation=2, turn=0))
    assert "Resigns a gammon" in resigned.splitlines()[-5]


def test_rejects_invalid_board() -> None:
    with pytest.raises(PositionError):
        render_board([0] * 26)


# --------------------------------------------------------------------------------------
# a game in progress from one seat (render_table)


def test_a_table_keeps_the_viewer_at_the_bottom_and_notes_each_side() -> None:
    from nard_rl.engine.ascii import Table, render_table

    board = Position.start().board
    text = render_table(
        Table(board, on_roll="opponent", doubled=True, cube_value=2, cube_owner="viewer",
              match_length=7, score=(2, 5)),
        names=("you", "bot"),
    ).splitlines()  # fmt: skip
    top = "\n".join(text[:7])  # the ID, the labels, the opponent's five rows
    bottom = "\n".join(text[8:])
    assert "Doubles to 4" in top and "To take or pass" in bottom  # the doubler is on top
    assert "5 points" in top and "2 points" in bottom
    assert text[-1].endswith("X: you (Cube: 2)") and "7 points match" in text[7]
    assert "On roll" not in "\n".join(text)  # the viewer is not on roll: never labelled so
    crawford = render_table(
        Table(board, on_roll="viewer", dice=(6, 5), match_length=7, score=(6, 3), crawford=True)
    )
    assert "7 points match (Crawford game)" in crawford and "Rolled 65" in crawford


def test_table_view_of_a_game_with_the_mars_clock() -> None:
    from nard_rl.engine.ascii import render_table, table_view
    from nard_rl.engine.game import Game

    now = [0.0]
    game = Game("mars", seed=1, clock=lambda: now[0])
    game.roll()  # the opening decides who moves first
    now[0] += 20.0  # the player on roll has used 11 s of turn time and 9 s of reserve
    viewer = 1 - game.player_on_roll
    text = render_table(table_view(game, viewer, last="bot rolled 6-5 and played 24/13"))
    lines = text.splitlines()
    assert lines[0] == " bot rolled 6-5 and played 24/13"
    assert "Clock: 0s + 1:21" in "\n".join(lines[2:8])  # the opponent on roll, on top
    assert "Clock: 11s + 1:30" in "\n".join(lines[9:])  # the viewer's clock waits
    assert "(no cube)" in text and "Rolled" in "\n".join(lines[2:8])
    assert f"Position ID: {game.position.position_id()}" in text  # gnubg's, side on roll
