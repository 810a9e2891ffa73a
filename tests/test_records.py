"""Reading match records: gnubg's own ``.sgf`` and ``.mat`` exports of self-play matches
(made by ``scripts/bench_analyze.py --make-test-data``) replayed with every move legal,
the project's own ``.mat`` export read back, and bad files refused with the game, the move
number and the text named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nard_rl.engine.game import (
    Double,
    Drop,
    Game,
    Match,
    Move,
    NoPlay,
    Phase,
    Take,
)
from nard_rl.engine.matfile import export_mat
from nard_rl.records import RecordError, load_match, parse_match, replay

DATA = Path(__file__).parent / "data" / "records"
STEMS = ("gnubg_3pt", "gnubg_5pt")


def _key(event: object) -> object:
    """An event as the records compare it: a roll's dice in either order (``.mat``
    writes the higher die first)."""
    if isinstance(event, (Move, NoPlay)):
        board = event.board if isinstance(event, Move) else None
        return (type(event).__name__, event.player, tuple(sorted(event.dice)), board)
    return event


def _game_events(game) -> list[object]:
    keep = (Move, NoPlay, Double, Take, Drop)
    return [_key(e) for e in game.record if isinstance(e, keep)]


def _events(match):
    return [_game_events(g.game) for g in match.games]


@pytest.mark.parametrize("stem", STEMS)
def test_gnubg_files_replay_alike_in_both_formats(stem: str) -> None:
    sgf = load_match(DATA / f"{stem}.sgf")
    mat = load_match(DATA / f"{stem}.mat")
    assert sgf.names == mat.names == ("Alice", "Bob")
    assert sgf.length == mat.length
    assert _events(sgf) == _events(mat)
    assert [g.score for g in sgf.games] == [g.score for g in mat.games]
    # every game ends with a result and the match with a winner at the length
    assert all(g.game.is_over for g in sgf.games)
    last = sgf.games[-1]
    final = list(last.score)
    final[last.game.result.winner] += last.game.result.points
    assert max(final) >= sgf.length


@pytest.mark.parametrize("stem", STEMS)
def test_move_counts_match_gnubg(stem: str) -> None:
    """gnubg's own statistics of the same file: moves per player, and its unforced ones
    are exactly the moves with more than one distinct legal play."""
    ref = json.loads((DATA / f"{stem}.gnubg0.json").read_text())["players"]
    match = load_match(DATA / f"{stem}.sgf")
    moves = [0, 0]
    for g in match.games:
        for e in g.game.record:
            if isinstance(e, (Move, NoPlay)):
                moves[e.player] += 1
    assert moves == [ref["0"]["moves"], ref["1"]["moves"]]


def test_crawford_game_and_scores_of_the_5_point_match() -> None:
    match = load_match(DATA / "gnubg_5pt.mat")
    scores = [g.score for g in match.games]
    assert scores == [(0, 0), (0, 1), (0, 2), (0, 4), (1, 4), (3, 4)]
    assert [g.crawford for g in match.games] == [False, False, False, True, False, False]
    assert not any(g.game.can_double() for g in match.games if g.crawford)


def _random_match(length: int, seed: int) -> Match:
    """A match (or money session) of random plays with doubles, takes and drops."""
    rng = np.random.default_rng(seed)
    match = Match(length, seed=seed)
    for _ in range(40):
        game = match.game
        while not game.is_over:
            if game.phase is Phase.OPENING:
                game.roll()
            elif game.phase is Phase.ROLL_OR_DOUBLE:
                if game.can_double() and rng.random() < 0.08:
                    game.double()
                else:
                    game.roll()
            elif game.phase is Phase.TAKE_OR_DROP:
                game.take() if rng.random() < 0.7 else game.drop()
            elif game.phase is Phase.MOVE:
                plays = game.legal_plays()
                game.play(plays[int(rng.integers(len(plays)))].board)
        if match.is_over or (length == 0 and len(match.games) == 3):
            break
        match.next_game()
    return match


@pytest.mark.parametrize("length,seed", [(0, 1), (5, 2), (7, 3)])
def test_own_mat_export_reads_back(length: int, seed: int) -> None:
    match = _random_match(length, seed)
    text = export_mat(match, ("North", "South"))
    back = replay(parse_match(text, "export"))
    assert back.names == ("North", "South")
    assert back.length == length
    assert len(back.games) == len(match.games)
    for g, original in zip(back.games, match.games, strict=True):
        assert _game_events(g.game) == _game_events(original)
        assert g.game.result == original.result
        assert g.crawford == original.crawford


def _mat_text() -> str:
    return (DATA / "gnubg_3pt.mat").read_text()


def test_illegal_move_names_game_move_and_text() -> None:
    text = _mat_text().replace("61: 20/14 14/13", "61: 20/14 14/12", 1)
    with pytest.raises(RecordError) as err:
        replay(parse_match(text, "bad.mat"))
    msg = str(err.value)
    assert "bad.mat: game 1, move 5" in msg and "20/14 14/12" in msg and "not reachable" in msg


def test_other_programs_spellings() -> None:
    """eXtreme Gammon's "Cannot Move", joined chains, bar/off words and "and the match"."""
    text = (
        _mat_text()
        .replace("66: ", "66: Cannot Move", 1)
        .replace("61: 20/14 14/13", "61: 20/13", 1)
        .replace("65: 25/20 9/3", "65: bar/20 9/3", 1)
        .replace("Wins 6 points", "Wins 6 points and the match", 1)
    )
    assert _events(replay(parse_match(text, "xg.mat"))) == _events(
        load_match(DATA / "gnubg_3pt.mat")
    )


def test_no_play_recorded_where_a_play_exists() -> None:
    text = _mat_text().replace("61: 11/5 11/10*", "61:", 1)
    with pytest.raises(RecordError, match=r"game 1, move 6 .*has legal plays"):
        replay(parse_match(text, "bad.mat"))


def test_truncated_files() -> None:
    sgf = (DATA / "gnubg_3pt.sgf").read_text()
    with pytest.raises(RecordError, match="truncated"):
        parse_match(sgf[: len(sgf) // 2], "cut.sgf")
    mat = _mat_text()
    cut = mat[: mat.index("13/11 24/23") + 8]  # "21: 13/11 24" ends the file mid-move
    with pytest.raises(RecordError, match=r"game 1, move 1"):
        replay(parse_match(cut, "cut.mat"))


def test_wrong_player_count() -> None:
    three = _mat_text().replace(
        " Alice : 0                      Bob : 0", " Alice : 0   Bob : 0   Carol : 0", 1
    )
    with pytest.raises(RecordError, match="two players"):
        parse_match(three, "three.mat")
    one = _mat_text().replace(" Alice : 0                      Bob : 0", " Alice : 0", 1)
    with pytest.raises(RecordError, match="two players"):
        parse_match(one, "one.mat")


def test_unreadable_token_and_score_mismatch() -> None:
    with pytest.raises(RecordError, match=r"game 1, move 2: cannot read 'Beavers'"):
        parse_match(_mat_text().replace("65: 25/20 9/3", "Beavers", 1), "x.mat")
    five = (
        (DATA / "gnubg_5pt.mat")
        .read_text()
        .replace(
            " Alice : 0                      Bob : 4", " Alice : 0                      Bob : 3", 1
        )
    )
    with pytest.raises(RecordError, match=r"game 4: the file gives the score 0-3"):
        replay(parse_match(five, "score.mat"))


def test_not_a_match_file() -> None:
    with pytest.raises(RecordError, match="empty"):
        parse_match("", "empty.mat")
    with pytest.raises(RecordError, match=r"not a \.mat match file"):
        parse_match("hello world\n", "hello.txt")
    with pytest.raises(RecordError, match="cannot read the file"):
        load_match(DATA / "missing.sgf")


def test_sgf_bad_move_letters() -> None:
    sgf = (DATA / "gnubg_3pt.sgf").read_text().replace(";W[21xwmk]", ";W[21x!mk]", 1)
    with pytest.raises(RecordError, match=r"game 1, move 1: cannot read the move"):
        parse_match(sgf, "bad.sgf")
    wrong_dice = (DATA / "gnubg_3pt.sgf").read_text().replace(";W[21xwmk]", ";W[31xwmk]", 1)
    with pytest.raises(RecordError, match=r"game 1, move 1 .*not reachable with 3-1"):
        replay(parse_match(wrong_dice, "dice.sgf"))


def _bench_module():
    import importlib.util

    path = Path(__file__).parents[1] / "scripts" / "bench_analyze.py"
    spec = importlib.util.spec_from_file_location("bench_analyze", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.gnubg
@pytest.mark.parametrize("seed,noise", [(901, (0.0, 0.06)), (902, (0.03, 0.01))])
def test_fresh_gnubg_matches_replay(tmp_path: Path, seed: int, noise: tuple[float, float]) -> None:
    """gnubg plays a new 3-point match now; both of its files replay with every move
    legal, alike, and with gnubg's own count of moves and unforced moves."""
    bench = _bench_module()
    sgf, mat = bench.play_match(tmp_path / "fresh", 3, seed, noise)
    a, b = load_match(sgf), load_match(mat)
    assert _events(a) == _events(b)
    ref = bench.gnubg_analysis(sgf, 0)["players"]
    moves, unforced = [0, 0], [0, 0]
    for g in a.games:
        assert g.game.result == b.games[g.number - 1].game.result
        probe = Game(g.game.rules, match_length=a.length, crawford=g.crawford)
        for e in g.game.record:
            if isinstance(e, (Move, NoPlay)):
                moves[e.player] += 1
            if isinstance(e, Move):
                unforced[e.player] += len(probe.legal_plays()) > 1
            probe.apply(e)
    assert moves == [ref[0]["moves"], ref[1]["moves"]]
    assert unforced == [ref[0]["unforced"], ref[1]["unforced"]]
