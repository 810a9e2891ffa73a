"""Players: the registry, the random player, and GNU Backgammon driven as a subprocess."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nard_rl.engine.movegen import legal_afterstates, legal_afterstates_batch
from nard_rl.engine.position import START_BOARD
from nard_rl.players import Player, make_player, register_player_factory
from nard_rl.players import base as players_base
from nard_rl.players.gnubg_player import GnubgError, apply_steps, build_shim, gnubg_available
from nard_rl.players.random_player import RandomPlayer

DATA = Path(__file__).parent / "data"

needs_gnubg = pytest.mark.skipif(not gnubg_available(), reason="GNU Backgammon not installed")


def _movegen_positions(limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    lines = (DATA / "movegen_gnubg_public.jsonl").read_text().splitlines()[:limit]
    records = [json.loads(line) for line in lines]
    return (
        np.array([r["board"] for r in records], dtype=np.int8),
        np.array([r["dice"] for r in records], dtype=np.int8),
    )


def _check_picks(picks: np.ndarray, offsets: np.ndarray) -> None:
    counts = np.diff(offsets)
    assert picks.dtype == np.int64 and picks.shape == counts.shape
    assert np.all(picks[counts == 0] == -1)
    assert np.all((picks[counts > 0] >= 0) & (picks[counts > 0] < counts[counts > 0]))


# -- registry -----------------------------------------------------------------------------


class _Fixed(Player):
    name = "fixed"

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def choose_batch(self, boards, dice, afterstates, offsets):  # type: ignore[no-untyped-def]
        return np.where(np.diff(offsets) > 0, 0, -1).astype(np.int64)


def test_make_player_builtin_specs() -> None:
    assert isinstance(make_player("random", seed=1), RandomPlayer)
    assert make_player("pubeval").name == "pubeval"


def test_unknown_specs_list_the_choices() -> None:
    with pytest.raises(ValueError, match="random, pubeval, gnubg"):
        make_player("nonsense")
    with pytest.raises(ValueError, match="ply"):
        make_player("gnubg:two")
    with pytest.raises(ValueError, match="unknown rule set"):
        make_player("random", rules="chess")


def test_registered_factories_receive_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players_base, "_FACTORIES", {})
    seen: list[tuple[str, str, int | None]] = []

    def factory(spec: str, *, rules, seed):  # type: ignore[no-untyped-def]
        seen.append((spec, rules.name, seed))
        return _Fixed(spec)

    register_player_factory("checkpoint", factory)
    register_player_factory("mine", factory)
    assert make_player("runs/a/best.pt", rules="mars", seed=3).spec == "runs/a/best.pt"
    assert make_player("default").spec == "default"
    assert make_player("mine:7").spec == "mine:7"
    assert seen == [
        ("runs/a/best.pt", "mars", 3),
        ("default", "standard", None),
        ("mine:7", "standard", None),
    ]


def test_network_specs_without_a_factory_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players_base, "_FACTORIES", {})
    monkeypatch.setattr(players_base, "NETWORK_MODULE", "nard_rl.no_such_network_module")
    with pytest.raises(ValueError, match="network players are not available"):
        make_player("x.pt")


# -- random -------------------------------------------------------------------------------


def test_random_picks_are_legal_seeded_and_uniform() -> None:
    boards, dice = _movegen_positions()
    afters, offsets = legal_afterstates_batch(boards, dice)
    a = RandomPlayer(seed=7).choose_batch(boards, dice, afters, offsets)
    b = RandomPlayer(seed=7).choose_batch(boards, dice, afters, offsets)
    _check_picks(a, offsets)
    np.testing.assert_array_equal(a, b)
    assert (np.diff(offsets) == 0).any()  # the set has positions with no legal play

    offsets3 = np.arange(0, 3 * 3001, 3, dtype=np.int64)  # 3,000 slices of three plays
    picks = RandomPlayer(seed=1).choose_batch(
        np.zeros((3000, 26)), np.ones((3000, 2)), np.zeros((9000, 26)), offsets3
    )
    counts = np.bincount(picks, minlength=3)
    assert counts.sum() == 3000 and counts.min() > 850  # expected 1,000 each


def test_choose_one_position_uses_choose_batch() -> None:
    afters, _ = legal_afterstates(np.array(START_BOARD, dtype=np.int8), 6, 5)
    assert _Fixed("x").choose(np.array(START_BOARD), np.array([6, 5]), afters) == 0
    assert _Fixed("x").choose(np.array(START_BOARD), np.array([6, 5]), afters[:0]) == -1


# -- gnubg (no process needed) -----------------------------------------------------------------


def test_apply_steps_hits_enters_and_bears_off() -> None:
    board = np.zeros(26, dtype=np.int8)
    board[25], board[20], board[3], board[1] = 1, -1, 2, 12
    after = apply_steps(board, [25, 20, 3, 0, 0, 0, 0, 0])  # bar/20* 3/off
    expected = board.copy()
    expected[25], expected[20], expected[0], expected[3] = 0, 1, -1, 1
    np.testing.assert_array_equal(after, expected)
    with pytest.raises(GnubgError):
        apply_steps(board, [10, 5, 0, 0, 0, 0, 0, 0])


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_shim_is_built_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = build_shim()
    assert first is not None and first.is_file() and first.parent == tmp_path / "nard-rl"
    stamp = first.stat().st_mtime_ns
    assert build_shim() == first and first.stat().st_mtime_ns == stamp


# -- gnubg (subprocess) -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def gnubg0():  # type: ignore[no-untyped-def]
    player = make_player("gnubg:0")
    yield player
    player.close()


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_plays_the_book_opening(gnubg0: Player) -> None:
    board = np.array(START_BOARD, dtype=np.int8)
    afters, _ = legal_afterstates(board, 3, 1)
    chosen = afters[gnubg0.choose(board, np.array([3, 1]), afters)]
    expected = board.copy()  # 8/5 6/5: make the 5 point
    expected[8] -= 1
    expected[6] -= 1
    expected[5] += 2
    np.testing.assert_array_equal(chosen, expected)


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_choices_are_among_our_plays(gnubg0: Player) -> None:
    boards, dice = _movegen_positions(400)
    afters, offsets = legal_afterstates_batch(boards, dice)
    picks = gnubg0.choose_batch(boards, dice, afters, offsets)  # raises on any mismatch
    _check_picks(picks, offsets)
    again = gnubg0.choose_batch(boards[:50], dice[:50], afters[: offsets[50]], offsets[:51])
    np.testing.assert_array_equal(again, picks[:50])  # deterministic


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_under_the_waste_rule_falls_back_to_ranking_our_plays() -> None:
    boards, dice = _movegen_positions()
    _, std_off = legal_afterstates_batch(boards, dice, False)
    _, mars_off = legal_afterstates_batch(boards, dice, True)
    differ = [
        i
        for i in range(len(boards))
        if std_off[i + 1] - std_off[i] != mars_off[i + 1] - mars_off[i]
    ]
    assert differ, "the reference set has positions where R29 removes plays"
    sub_b, sub_d = boards[differ], dice[differ]
    afters, offsets = legal_afterstates_batch(sub_b, sub_d, True)
    with make_player("gnubg:0", rules="mars") as player:
        raw = player.best_steps(sub_b, sub_d)  # type: ignore[attr-defined]
        outside = 0
        for i, steps in enumerate(raw):
            plays = afters[offsets[i] : offsets[i + 1]]
            outside += not (plays == apply_steps(sub_b[i], steps)).all(axis=1).any()
        assert outside > 0  # the fallback is exercised
        _check_picks(player.choose_batch(sub_b, sub_d, afters, offsets), offsets)
    with make_player("gnubg:0") as standard, pytest.raises(GnubgError, match="not among"):
        standard.choose_batch(sub_b, sub_d, afters, offsets)


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_player_close_ends_the_process() -> None:
    player = make_player("gnubg:1")
    proc = player._proc  # type: ignore[attr-defined]
    board = np.array([START_BOARD], dtype=np.int8)
    dice = np.array([[6, 4]], dtype=np.int8)
    afters, offsets = legal_afterstates_batch(board, dice)
    _check_picks(player.choose_batch(board, dice, afters, offsets), offsets)
    player.close()
    assert proc.poll() is not None
    with pytest.raises(GnubgError, match="closed"):
        player.choose_batch(board, dice, afters, offsets)
    player.close()  # idempotent


def test_gnubg_stand_in_plays_cubefully_when_given_a_cube() -> None:
    """With a cube and score, gnubg's own player chooses cubeful plays, so the in-process
    stand-in must too; cubeless money play stays cubeless.  (A fake ``gnubg`` module
    records the evaluation contexts the script hands over.)"""
    from nard_rl.players import gnubg_script

    class FakeGnubg:
        def __init__(self) -> None:
            self.contexts: list[dict[str, object]] = []
            self.infos: list[object] = []

        def cubeinfo(self, *args: object) -> object:
            return ("cube", args)

        def command(self, text: str) -> None:
            pass

        def findbestmove(self, board: object, info: object, context: dict) -> tuple:
            self.contexts.append(context)
            self.infos.append(info)
            return (8, 5, 6, 5, 0, 0, 0, 0)

    fake = FakeGnubg()
    board = list(START_BOARD)
    request = {"op": "best", "plies": 0, "boards": [board, board], "dice": [[3, 1], [3, 1]]}
    gnubg_script._handle(fake, request)
    assert [c["cubeful"] for c in fake.contexts] == [0, 0]
    fake.contexts.clear()
    fake.infos.clear()
    cubes = [[1, -1, 5, 2, 3, 0], [2, 1, 0, 0, 0, 0]]  # a 5-point match at 2-3; money, owned
    answer = gnubg_script._handle(fake, {**request, "cubes": cubes})
    assert [c["cubeful"] for c in fake.contexts] == [1, 1]
    assert all(c["plies"] == 0 and c["noise"] == 0.0 for c in fake.contexts)
    # the match cube's scores are (opponent, side on roll): gnubg's player 1 is on roll
    assert fake.infos[0] == ("cube", (1, -1, 1, 5, (3, 2), 0, 0))
    assert answer == {"moves": [[8, 5, 6, 5, 0, 0, 0, 0]] * 2}
