"""Move notation (``format_steps``), by hand and against GNU Backgammon's hint list.

The expected strings below are written by hand in gnubg's style: moves from the
highest source point down, ``bar`` and ``off`` by name, ``*`` after a point where a
blot is hit, one checker's consecutive steps joined (intermediate points shown only
where they hit), identical moves counted as ``(n)``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from reference_movegen import START, board_of, random_game_positions

from nard_rl.engine.movegen import legal_afterstates
from nard_rl.engine.movetext import format_plays, format_steps
from nard_rl.engine.position import Position, PositionError

GNUBG = "/usr/games/gnubg"


def apply_notation(board: Sequence[int], text: str) -> tuple[int, ...]:
    """The board after a play written in gnubg notation (an independent reading of it).

    Each part ``a/b*/c(n)`` moves one checker from ``a`` to ``c`` n times; a blot is hit
    where the part shows ``*`` and wherever a checker comes to rest on one.
    """
    b = [int(v) for v in board]
    for part in text.split():
        m = re.fullmatch(r"([^()]+)(?:\((\d)\))?", part)
        assert m, part
        points = m.group(1).split("/")
        for _ in range(int(m.group(2) or 1)):
            src = 25 if points[0] == "bar" else int(points[0])
            b[src] -= 1
            for k, name in enumerate(points[1:], start=1):
                last = k == len(points) - 1
                p = 0 if name.rstrip("*") == "off" else int(name.rstrip("*"))
                if p and b[p] == -1 and (last or name.endswith("*")):
                    b[p] = 0
                    b[0] -= 1
                if last and p:
                    b[p] += 1
    return tuple(b)


# --- by hand ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "steps", "text"),
    [
        (START, [(24, 18), (13, 11)], "24/18 13/11"),
        (START, [(13, 11), (24, 18)], "24/18 13/11"),  # highest source first
        (START, [(24, 18), (24, 18), (13, 7), (13, 7)], "24/18(2) 13/7(2)"),
        (START, [(8, 2), (6, 2)], "8/2 6/2"),
        (START, [(24, 21), (21, 20)], "24/20"),  # one checker: joined, 21 not shown
        (START, [(13, 7), (-1, 0), (-1, 0), (-1, 0)], "13/7"),  # one-die play, padded
        (board_of({13: 1}, {19: 2}, bar=1), [(25, 22)], "bar/22"),
        (board_of({13: 1}, {22: 1}, bar=1), [(25, 22)], "bar/22*"),
        (board_of({13: 1}, {22: 1}, bar=1), [(25, 22), (22, 20)], "bar/22*/20"),
        (board_of({13: 1}, bar=1), [(25, 20), (20, 15)], "bar/15"),
        (board_of({13: 1}, {7: 1}), [(13, 7)], "13/7*"),
        (board_of({24: 1}, {20: 1}), [(24, 20), (20, 16)], "24/20*/16"),
        (board_of({24: 1}, {20: 1, 16: 1}), [(24, 20), (20, 16)], "24/20*/16*"),
        (board_of({24: 1}, {16: 1}), [(24, 20), (20, 16)], "24/16*"),
        (board_of({6: 2, 2: 1}), [(6, 0)], "6/off"),
        (board_of({6: 2, 2: 1}), [(6, 0), (2, 0)], "6/off 2/off"),
        (board_of({8: 2}), [(8, 2), (8, 2)], "8/2(2)"),
        (board_of({8: 2}), [(8, 2), (8, 2), (2, 0), (2, 0)], "8/off(2)"),
        (board_of({5: 1, 1: 1}), [(5, 0), (1, 0)], "5/off 1/off"),
        # two checkers to one blot: the star goes on the first listed, as gnubg does
        (board_of({6: 1, 5: 1}, {2: 1}), [(5, 2), (6, 2)], "6/2* 5/2"),
        # a checker refilling the point another just left reads as one checker moving on
        (board_of({8: 1, 6: 1}), [(6, 1), (8, 6)], "8/1"),
        (board_of({13: 1, 8: 1}, {3: 1}), [(8, 3), (13, 8)], "13/3*"),
    ],
)
def test_notation_by_hand(board: Sequence[int], steps, text: str) -> None:
    assert format_steps(board, np.array(steps)) == text
    assert format_steps(board, steps) == text  # plain sequences work too


def test_notation_does_not_touch_the_board() -> None:
    board = list(START)
    format_steps(board, [(24, 18), (13, 11)])
    assert board == list(START)


def test_batch_names_each_play_as_one_at_a_time() -> None:
    """``format_plays`` (the generator's whole ``(N, 4, 2)`` array) agrees with
    ``format_steps`` play by play, with the steps given in any order."""
    rng = np.random.default_rng(2)
    for board, roll in random_game_positions(seed=11, count=300):
        _, steps = legal_afterstates(np.array(board, dtype=np.int8), *roll)
        batch = format_plays(board, steps)
        assert len(batch) == steps.shape[0]
        for i, text in enumerate(batch):
            shuffled = steps[i][rng.permutation(4)]
            assert format_steps(board, shuffled) == text


@pytest.mark.parametrize(
    ("board", "steps", "message"),
    [
        (START, [(10, 5)], "step 10/5 does not move a checker of the mover"),
        (START, [(24, 18), (1, 0)], "step 1/0"),  # point 1 holds the opponent's checkers
        (START, [(6, 8)], "step 6/8"),  # backwards
        (START, [(26, 20)], "step 26/20"),
        (START, [(6, 1)] * 5, "at most 4 steps"),
        (START, [(6, 1, 0)], "(from, to) pairs"),
        (START[:25], [(6, 1)], "26 entries"),
    ],
)
def test_bad_steps_are_refused_by_name(board, steps, message: str) -> None:
    with pytest.raises(PositionError, match=re.escape(message)):
        format_steps(board, steps)


def test_format_plays_checks_its_array_shape() -> None:
    with pytest.raises(PositionError, match=r"\(N, 4, 2\)"):
        format_plays(START, np.zeros((3, 2), dtype=np.int8))
    assert format_plays(START, np.zeros((0, 4, 2), dtype=np.int8)) == []


def test_plays_are_named_like_gnubg_start_six_four() -> None:
    """The 14 plays of 6-4 from the start, as gnubg's hint lists them (by hand)."""
    expected = {
        "24/14", "24/18 13/9", "8/2 6/2", "24/20 24/18", "24/20 13/7", "13/9 13/7",
        "13/3", "24/18 6/2", "24/18 8/4", "24/20 8/2", "13/9 8/2", "13/7 8/4",
        "13/7 6/2", "8/4 8/2",
    }  # fmt: skip
    assert {p.move for p in Position.start().plays(6, 4)} == expected


def test_notation_reproduces_its_play() -> None:
    """Reading a play's notation back gives the play's position (random-play sample)."""
    for board, roll in random_game_positions(seed=5, count=400):
        for play in Position(board).plays(*roll):
            assert apply_notation(board, play.move) == play.board, (board, roll, play.move)


def test_one_checker_is_named_once_whatever_the_step_order() -> None:
    """A checker moving on from where another stopped is one move in gnubg's notation.

    From 24 and 23 with 3-1, ``23/20 24/23`` and ``24/23 23/20`` reach the same position,
    which gnubg names ``24/20``; the name must not depend on the order the generator
    happened to record the steps in.
    """
    board = board_of({24: 2, 23: 1, 6: 5}, {21: 1, 19: 4})
    assert format_steps(board, [(24, 23), (23, 20)]) == "24/20"
    assert format_steps(board, [(23, 20), (24, 23)]) == "24/20"
    # the same position as gnubg lists it (record 1 of movegen_gnubg_public.jsonl)
    rec = [0, -1, 1, -3, 0, 1, 4, 0, 0, 0, 0, 1, -2, 2, 0, 0, 0, -3, -1, -4, 1, -1, 1, 2, 2, 0]
    moves = {p.move for p in Position(rec).plays(3, 1)}
    assert "24/20" in moves and "6/2" in moves


# --- against GNU Backgammon -------------------------------------------------------------------

_GNUBG_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import gnubg
    gnubg.command("set player 0 human")
    gnubg.command("set player 1 human")
    gnubg.command("new game")
    gnubg.command("set evaluation chequerplay evaluation plies 0")
    out = []
    for line in open(IN_PATH):
        r = json.loads(line)
        b = r["board"]
        simple = [b[25]] + b[1:25] + [-b[0]]  # on-roll bar, points 1..24, other bar
        gnubg.command("set board simple " + " ".join(map(str, simple)))
        gnubg.command("set dice %d %d" % tuple(r["dice"]))
        out.append([h["move"] for h in gnubg.hint(10000)["hint"]])
    json.dump(out, open(OUT_PATH, "w"))
    """
)


def gnubg_hints(cases: list[tuple[Sequence[int], tuple[int, int]]], tmp: Path) -> list[list[str]]:
    """gnubg's names of every legal play of each case (its 0-ply hint list)."""
    src, dst, script = tmp / "in.jsonl", tmp / "out.json", tmp / "hints.py"
    src.write_text(
        "".join(json.dumps({"board": list(b), "dice": list(d)}) + "\n" for b, d in cases)
    )
    script.write_text(f"IN_PATH = {str(src)!r}\nOUT_PATH = {str(dst)!r}\n" + _GNUBG_SCRIPT)
    subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(script)],
        check=True,
        capture_output=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(dst.read_text())


def canonical(text: str) -> tuple[tuple[tuple[str, str], ...], frozenset[str]]:
    """A play's moves as a multiset of (from, to) plus the set of points hit.

    Two spellings that differ only in where a ``*`` sits among moves to the same point,
    or in the order of moves from one point, compare equal.
    """
    moves: list[tuple[str, str]] = []
    hits: set[str] = set()
    for part in text.split():
        m = re.fullmatch(r"([^()]+)(?:\((\d)\))?", part)
        assert m, part
        points = m.group(1).split("/")
        hits.update(p.rstrip("*") for p in points if p.endswith("*"))
        moves += [(points[0], points[-1].rstrip("*"))] * int(m.group(2) or 1)
    return tuple(sorted(moves)), frozenset(hits)


@pytest.fixture(scope="module")
def gnubg_cases(tmp_path_factory) -> list[tuple[list[int], tuple[int, int], list[str]]]:
    with open(Path(__file__).parent / "data" / "movegen_gnubg_public.jsonl") as fh:
        recs = [json.loads(line) for line in fh]
    rng = random.Random(3)
    cases = [(r["board"], tuple(r["dice"])) for r in rng.sample(recs, 150)]
    cases += [(list(b), d) for b, d in random_game_positions(seed=8, count=400)[::8]]
    hints = gnubg_hints(cases, tmp_path_factory.mktemp("gnubg"))
    return [(b, d, h) for (b, d), h in zip(cases, hints, strict=True)]


@pytest.mark.gnubg
def test_gnubg_names_the_same_plays(gnubg_cases) -> None:
    """Reading gnubg's names gives exactly our afterstates (checks ``apply_notation`` too)."""
    for board, roll, hints in gnubg_cases:
        ours = sorted(p.board for p in Position(board).plays(*roll))
        assert sorted(apply_notation(board, h) for h in hints) == ours, (board, roll)


@pytest.mark.gnubg
def test_notation_agrees_with_gnubg(gnubg_cases) -> None:
    """Exactly gnubg's name for every play of a non-double.

    For doubles only the moves and the points hit must agree: gnubg's ordering of moves
    from one point and its placing of ``*`` among moves to one point differ there (see
    ``canonical``), e.g. ours ``24/20 24/16 5/1* 5/1``, gnubg's ``24/16 24/20 5/1*(2)``.
    """
    differ = []
    for board, roll, hints in gnubg_cases:
        ours = {p.board: p.move for p in Position(board).plays(*roll)}
        for h in hints:
            mine = ours[apply_notation(board, h)]
            same = mine == h if roll[0] != roll[1] else canonical(mine) == canonical(h)
            if not same:
                differ.append(f"{roll} {board}: ours {mine!r}, gnubg {h!r}")
    assert not differ, f"{len(differ)} plays named differently, e.g.\n" + "\n".join(differ[:10])
