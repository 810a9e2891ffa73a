"""Jellyfish ``.mat`` export: hand-written expected files, and (marked ``gnubg``) random
matches imported into GNU Backgammon, which must read the same games, moves and score.

The expected texts below were written by hand from the format as GNU Backgammon itself
exports it: a 5-character move number (``"  1) "``), a 28-character column for player 0,
then player 1's column; steps ``from/to`` with 25 for the bar, 0 for off, ``*`` on hits.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from boards import board

from nard_rl.engine.game import Game, Match, Move, NoPlay, Phase, ResultKind
from nard_rl.engine.matfile import export_mat

GNUBG = "/usr/games/gnubg"


def test_money_game_with_double_and_drop() -> None:
    game = Game(dice=[(2, 5), (6, 4)])
    game.roll()  # player 1 (O) opens with 5-2
    game.play("13/8 13/11")
    game.roll()
    game.play("8/2 6/2")
    game.double()
    game.drop()
    expected = (
        " 0 point match\n"
        "\n"
        " Game 1\n"
        " Player 1 : 0                   Player 2 : 0\n"
        "  1)                             52: 13/11 13/8\n"
        "  2) 64: 8/2 6/2                  Doubles => 2\n"
        "  3)  Drops                       Wins 1 point\n"
        "\n"
    )
    assert export_mat([game]) == expected


def test_match_with_pass_bear_off_resignation_and_scores() -> None:
    # Game 1: player 0 bears off the last checker; player 1 has none off: a gammon.
    first = Game(start=board({1: 1}, {12: 15}), dice=[(6, 5)], match_length=3)
    first.roll()
    first.play("1/off")
    # Game 2: player 0 is closed out (R12) and passes; player 1 resigns a single.
    closed = board({6: 5, 8: 3, 13: 6}, {p: 2 for p in range(19, 25)} | {12: 3}, mover_bar=1)
    second = Game(start=closed, dice=[(6, 5)], match_length=3)
    second.roll()
    second.resign(ResultKind.SINGLE, player=1)
    second.accept_resignation()
    # Game 3 (unfinished): player 0 enters hitting and goes on with the same checker.
    third = Game(start=board({13: 14}, {20: 1, 12: 14}, mover_bar=1), dice=[(5, 3)])
    third.match_length = 3
    third.roll()
    third.play("bar/20*/17")
    expected = (
        " 3 point match\n"
        "\n"
        " Game 1\n"
        " Alice : 0                      Bob : 0\n"
        "  1) 65: 1/0\n"
        "      Wins 2 points\n"
        "\n"
        " Game 2\n"
        " Alice : 2                      Bob : 0\n"
        "  1) 65:\n"
        "      Wins 1 point\n"
        "\n"
        " Game 3\n"
        " Alice : 3                      Bob : 0\n"
        "  1) 53: 25/20* 20/17\n"
        "\n"
    )
    assert export_mat([first, second, third], names=("Alice", "Bob")) == expected


def test_long_left_cell_keeps_a_separator() -> None:
    # 3-3 with two hits fills more than the 28-character column.
    start = board({24: 2, 18: 2, 6: 11}, {21: 1, 15: 1, 1: 13})
    game = Game(start=start, dice=[(3, 3), (6, 5)])
    game.roll()
    game.play(board({21: 2, 15: 2, 6: 11}, {1: 13}, opp_bar=2))
    game.roll()  # player 1 enters one checker with the 5; the 6 point is closed
    game.play("bar/20")
    line = export_mat([game]).splitlines()[4]
    assert line == "  1) 33: 24/21* 24/21 18/15* 18/15 65: 25/20"


def test_names_are_checked() -> None:
    with pytest.raises(ValueError, match="names"):
        export_mat([Game()], names=("a:b", "c"))


# --------------------------------------------------------------------------------------
# gnubg import
# --------------------------------------------------------------------------------------

GNUBG_SCRIPT = """
import json, os
out = []
for path in os.environ["NARD_MAT_FILES"].split(os.pathsep):
    gnubg.command("import mat " + path)
    m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
    out.append({"info": m["match-info"],
                "games": [{"info": g["info"], "game": g["game"]} for g in m["games"]]})
with open(os.environ["NARD_MAT_JSON"], "w") as fh:
    json.dump(out, fh, default=str)
"""


def random_match(seed: int, length: int, rules: str, games: int = 3) -> Match:
    """A random match (or money session of ``games`` games) with doubles, takes, drops,
    passes and resignations (accepted and declined)."""
    rng = np.random.default_rng(seed)
    match = Match(length, rules, seed=seed)
    while True:
        game = match.game
        while not game.is_over:
            phase = game.phase
            if phase is Phase.ROLL_OR_DOUBLE and rng.random() < 0.01:
                kind = ResultKind(int(rng.integers(1, 4))) if game.rules.cube else None
                game.resign(kind, player=int(rng.integers(2)))
            elif phase is Phase.RESIGN_PENDING:
                if rng.random() < 0.5:
                    game.accept_resignation()
                else:
                    game.decline_resignation()
            elif phase is Phase.ROLL_OR_DOUBLE and game.can_double() and rng.random() < 0.05:
                game.double()
            elif phase is Phase.TAKE_OR_DROP:
                game.take() if rng.random() < 0.75 else game.drop()
            elif phase is Phase.MOVE:
                plays = game.legal_plays()
                game.play(plays[int(rng.integers(len(plays)))].board)
            else:
                game.roll()
        if match.is_over or (length == 0 and len(match.games) == games):
            return match
        match.next_game()


def our_actions(game: Game) -> list[list[object]]:
    """Moves and cube actions in the normalised form gnubg's ``match()`` reports."""
    out: list[list[object]] = []
    for e in game.record:
        if isinstance(e, (Move, NoPlay)):
            steps = [[s.src, s.dst] for s in e.steps] if isinstance(e, Move) else []
            out.append(["move", "XO"[e.player], sorted(e.dice), sorted(steps)])
        elif type(e).__name__ in ("Double", "Take", "Drop"):
            out.append([type(e).__name__.lower(), "XO"[e.player]])  # type: ignore[attr-defined]
    return out


def gnubg_actions(game: dict[str, object]) -> list[list[object]]:
    out: list[list[object]] = []
    for a in game["game"]:  # type: ignore[attr-defined]
        if a["action"] == "move":
            out.append(["move", a["player"], sorted(a["dice"]), sorted(a["move"])])
        elif a["action"] in ("double", "take", "drop"):
            out.append([a["action"], a["player"]])
    return out


@pytest.mark.gnubg
def test_gnubg_imports_random_matches(tmp_path: Path) -> None:
    cases = [(11, 7, "standard"), (12, 0, "standard"), (13, 5, "mars"), (14, 3, "standard")]
    matches = [random_match(seed, length, rules) for seed, length, rules in cases]
    paths = []
    for i, match in enumerate(matches):
        path = tmp_path / f"m{i}.mat"
        path.write_text(export_mat(match, names=("Alice Smith", "Bob")))
        paths.append(str(path))
    script = tmp_path / "import.py"
    script.write_text(GNUBG_SCRIPT)
    result_path = tmp_path / "gnubg.json"
    env = dict(os.environ, NARD_MAT_FILES=os.pathsep.join(paths), NARD_MAT_JSON=str(result_path))
    subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(script)],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    imported = json.loads(result_path.read_text())
    for match, theirs in zip(matches, imported, strict=True):
        assert theirs["info"]["match-length"] == match.length
        assert theirs["info"]["X"]["name"] == "Alice Smith"
        assert len(theirs["games"]) == len(match.games)
        for index, (game, g) in enumerate(zip(match.games, theirs["games"], strict=True)):
            assert game.result is not None
            s0, s1 = match.scores_before(index)
            info = g["info"]
            assert (info["score-X"], info["score-O"]) == (s0, s1)
            assert info["winner"] == "XO"[game.result.winner]
            assert info["points-won"] == game.result.points
            assert gnubg_actions(g) == our_actions(game)
        last = theirs["games"][-1]["info"]
        final = [last["score-X"], last["score-O"]]
        final["XO".index(last["winner"])] += last["points-won"]
        if match.length:
            final = [min(s, match.length) for s in final]
        assert tuple(final) == match.score
