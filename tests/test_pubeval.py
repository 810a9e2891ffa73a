"""Pubeval: scores equal the reference implementation's, and the player takes the best."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import START_BOARD, Position
from nard_rl.players import make_player
from nard_rl.players.pubeval import pubeval_scores

DATA = Path(__file__).parent / "data"


def _reference() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lines = (DATA / "pubeval_reference.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return (
        np.array([r["afterstate"] for r in records], dtype=np.int8),
        np.array([r["race_weights"] for r in records], dtype=bool),
        np.array([r["score"] for r in records], dtype=np.float32),
    )


def _movegen_positions() -> tuple[np.ndarray, np.ndarray]:
    lines = (DATA / "movegen_gnubg_public.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return (
        np.array([r["board"] for r in records], dtype=np.int8),
        np.array([r["dice"] for r in records], dtype=np.int8),
    )


def test_scores_match_all_reference_records() -> None:
    afters, race, expected = _reference()
    assert len(expected) == 5002
    got = pubeval_scores(afters, race)
    assert got.dtype == np.float32
    # float32 accumulation in the original's order: equal up to float32 rounding
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-5)


def test_scores_for_one_weight_set_broadcast() -> None:
    afters, race, expected = _reference()
    sel = race
    np.testing.assert_array_equal(
        pubeval_scores(afters[sel], True), pubeval_scores(afters, race)[sel]
    )
    np.testing.assert_allclose(
        pubeval_scores(afters[sel], True), expected[sel], rtol=1e-6, atol=1e-5
    )


def test_bearing_off_the_last_checker_scores_the_maximum() -> None:
    done = np.zeros((1, 26), dtype=np.int8)
    done[0, 20] = -3  # the opponent still has checkers; we have none left
    assert pubeval_scores(done, True)[0] == np.float32(99999999.0)


def test_player_takes_the_highest_score_with_the_right_weights() -> None:
    boards, dice = _movegen_positions()
    afters, offsets = legal_afterstates_batch(boards, dice)
    picks = make_player("pubeval").choose_batch(boards, dice, afters, offsets)
    for i in range(len(boards)):
        lo, hi = offsets[i], offsets[i + 1]
        if lo == hi:
            assert picks[i] == -1
            continue
        race = Position(boards[i].tolist()).is_race()  # judged BEFORE the move
        scores = pubeval_scores(afters[lo:hi], race)
        assert scores[picks[i]] == scores.max()
        assert picks[i] == int(np.argmax(scores))  # first of equal scores


def test_race_weights_follow_the_position_before_the_move() -> None:
    # A race before the move: the race weights must rank the plays.
    race_board = np.array(
        [[0, 3, 3, 3, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, -3, -3, -3, -2, -2, 0, 0]],
        dtype=np.int8,
    )
    assert Position(race_board[0].tolist()).is_race()
    player = make_player("pubeval")
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            dice = np.array([[d1, d2]], dtype=np.int8)
            afters, offsets = legal_afterstates_batch(race_board, dice)
            pick = player.choose_batch(race_board, dice, afters, offsets)[0]
            assert pick == int(np.argmax(pubeval_scores(afters, True)))


@pytest.mark.parametrize("dice", [(3, 1), (6, 5), (4, 4)])
def test_choose_agrees_with_choose_batch(dice: tuple[int, int]) -> None:
    board = np.array([START_BOARD], dtype=np.int8)
    roll = np.array([dice], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(board, roll)
    player = make_player("pubeval")
    assert (
        player.choose(board[0], roll[0], afters)
        == player.choose_batch(board, roll, afters, offsets)[0]
    )
