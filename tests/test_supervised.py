"""The supervised pipeline: collection, labels, shards (killed and resumed), growing nets,
fitting, the gate, and the whole loop on a tiny config through the CLI."""

from __future__ import annotations

import copy
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from boards import board as board_from

from nard_rl.cli import main
from nard_rl.engine.batch import ROLLS, start_boards
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.engine.position import flip_boards
from nard_rl.engine.rules import cubeless_equity
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import NetEvaluator, load_evaluator
from nard_rl.nets.network import EquityNet, NetSpec, load_checkpoint, save_checkpoint
from nard_rl.search.nply import Search
from nard_rl.search.rollout import rollout
from nard_rl.training.supervised.dataset import merge_rows
from nard_rl.training.supervised.fit import (
    FitConfig,
    _loss,
    cosine_lr,
    fit,
    grow_net,
    heldout_mask,
    load_rows,
)
from nard_rl.training.supervised.gate import GateConfig, gate
from nard_rl.training.supervised.label import (
    SHARD_FIELDS,
    AnchorConfig,
    LabelConfig,
    anchor_rows,
    best_replies,
    collect_decisions,
    collect_outcomes,
    label_decisions,
    label_shard,
    make_labeller,
    read_shard,
    shard_path,
)

SMALL = LabelConfig(shards=3, decisions_per_shard=12, parallel_games=16, chunk=5)


def _spec(
    encoding: str = "extended", hidden: tuple[int, ...] = (8,), head: str = "sigmoid5"
) -> NetSpec:
    enc = get_encoding(encoding)
    return NetSpec(enc.name, enc.version, enc.size, hidden, "sigmoid", "standard", head)


def _net(
    seed: int = 0,
    encoding: str = "extended",
    hidden: tuple[int, ...] = (8,),
    head: str = "sigmoid5",
) -> EquityNet:
    torch.manual_seed(seed)
    return _spec(encoding, hidden, head).build().eval()


def _evaluator(seed: int = 0) -> NetEvaluator:
    return NetEvaluator(_net(seed), _spec())


def _save(path: Path, net: EquityNet, spec: NetSpec) -> Path:
    save_checkpoint(path, net, spec, games=0, step=0, config={"note": "test"})
    return path


def test_collected_decisions_are_real_decisions() -> None:
    ev = _evaluator()
    boards, dice = collect_decisions(ev, 50, np.random.default_rng(0), SMALL)
    assert boards.shape == (50, 26) and dice.shape == (50, 2)
    _, offsets = legal_afterstates_batch(boards, dice)
    assert (np.diff(offsets) >= SMALL.min_plays).all()  # forced plays are skipped
    again = collect_decisions(ev, 50, np.random.default_rng(0), SMALL)
    np.testing.assert_array_equal(boards, again[0])  # a pure function of the rng


def test_collection_sees_every_phase_of_the_game() -> None:
    """All parallel games start at the opening together; decisions must still come from
    whole games (middle games, races, bear-offs), not from the first plies only."""
    from nard_rl.engine.classify import CONTACT, classify, race_flags

    ev = load_evaluator("default")  # a real player's games, as the pipeline collects them
    cfg = LabelConfig(parallel_games=64, sample=0.25)
    boards, _ = collect_decisions(ev, 200, np.random.default_rng(3), cfg)
    pips = (np.clip(boards[:, 1:25], 0, None) * np.arange(1, 25)).sum(1)
    pips = pips + 25 * np.clip(boards[:, 25], 0, None)
    assert (pips < 80).mean() > 0.1  # late in games, far from the opening's 167
    assert (classify(boards) != CONTACT).any()
    # with the race net, the races it answers are left out; contact stays
    only = collect_decisions(ev, 200, np.random.default_rng(3), LabelConfig(race_net=True))
    assert not race_flags(only[0]).any()


def test_labels_are_the_search_of_the_best_candidates() -> None:
    ev = _evaluator()
    boards, dice = collect_decisions(ev, 8, np.random.default_rng(1), SMALL)
    cfg = LabelConfig(top_k=3, window=1.0)
    rows = label_decisions(ev, make_labeller(ev, cfg), boards, dice, cfg, first_id=100)
    np.testing.assert_allclose(rows["probs"], Search(ev).afterstate_probs(rows["boards"], 1))
    np.testing.assert_allclose(rows["probs0"], ev.probabilities(rows["boards"]), atol=1e-6)
    assert rows["decision"].min() >= 100
    for d in np.unique(rows["decision"]):
        sel = rows["decision"] == d
        eq0 = cubeless_equity(rows["probs0"][sel])
        assert (np.diff(eq0) <= 1e-9).all()  # ranked by 0-ply
        assert rows["rank0"][sel].tolist() == list(range(sel.sum()))
        eqn = cubeless_equity(rows["probs"][sel])
        assert rows["disagree"][sel].all() == (int(np.argmax(eqn)) != 0)
    # at 0-ply the labels are the 0-ply probabilities and nothing disagrees
    cfg0 = LabelConfig(ply=0, top_k=3, window=1.0)
    rows0 = label_decisions(ev, make_labeller(ev, cfg0), boards, dice, cfg0)
    np.testing.assert_allclose(rows0["probs"], rows0["probs0"], atol=1e-6)
    assert not rows0["disagree"].any()


def test_anchors_are_the_teachers_search_of_any_plays() -> None:
    """Anchor rows: up to per_decision legal plays of real decisions (not only the best
    ones), labelled by the teacher's own search, a pure function of the rng."""
    ev = _evaluator()
    rows = anchor_rows(ev, 60, np.random.default_rng(4), SMALL, per_decision=3, ply=1)
    n = rows["boards"].shape[0]
    assert 0 < n <= 60 and set(rows) == set(SHARD_FIELDS)
    assert np.bincount(rows["decision"]).max() <= 3
    np.testing.assert_allclose(rows["probs"], Search(ev).afterstate_probs(rows["boards"], 1))
    np.testing.assert_allclose(rows["probs0"], ev.probabilities(rows["boards"]), atol=1e-6)
    assert not rows["disagree"].any() and (rows["rank0"] == -1).all()
    # drawn from all plays: some anchor is not its decision's 0-ply choice
    eq0 = cubeless_equity(rows["probs0"])
    dec = rows["decision"]
    best = np.array([eq0[dec == d].max() for d in dec])
    assert (eq0 < best - 1e-9).any()
    again = anchor_rows(ev, 60, np.random.default_rng(4), SMALL, per_decision=3, ply=1)
    np.testing.assert_array_equal(rows["boards"], again["boards"])
    with pytest.raises(ValueError, match="anchors need"):
        anchor_rows(ev, 0, np.random.default_rng(4), SMALL)
    with pytest.raises(ValueError, match="bad anchor settings"):
        AnchorConfig(ply=3)


def test_best_replies_are_the_opponents_best_plays_dances_included() -> None:
    """Each reply is the teacher's 0-ply best play of the opponent for some roll, in the
    opponent's view; against a closed board the opponent's checker stays on the bar."""
    ev = _evaluator(3)
    boards, dice = collect_decisions(ev, 20, np.random.default_rng(5), SMALL)
    afters, offsets = legal_afterstates_batch(boards, dice)
    plays = np.ascontiguousarray(afters[offsets[:-1]])
    replies = best_replies(ev, plays, np.random.default_rng(6))
    assert replies.shape == plays.shape and replies.dtype == np.int8

    def eq(x: np.ndarray) -> np.ndarray:
        return cubeless_equity(ev.probabilities(x).astype(np.float64))

    for play, reply in zip(plays, replies, strict=True):
        opp = flip_boards(play[None])
        best_for = []
        for roll in ROLLS:
            cands, _ = legal_afterstates_batch(opp, roll[None])
            if reply.tolist() in cands.tolist():
                best_for.append(eq(reply[None])[0] >= eq(cands).max() - 1e-6)
        assert best_for and any(best_for), "a reply is a legal best play for some roll"
    closed = board_from("mover: 1:2 2:2 3:2 4:2 5:2 6:2 13:3; opp: 19:14 bar:1")
    dance = best_replies(ev, np.array([closed], np.int8), np.random.default_rng(0))
    np.testing.assert_array_equal(dance[0], flip_boards(np.array([closed], np.int8))[0])
    assert dance[0][25] == 1
    assert best_replies(ev, np.zeros((0, 26), np.int8), np.random.default_rng(0)).shape == (0, 26)


def test_anchor_replies_take_their_share_and_stay_reproducible() -> None:
    ev = _evaluator(2)
    rows = anchor_rows(ev, 80, np.random.default_rng(4), SMALL, per_decision=3, replies=0.5)
    plain = anchor_rows(ev, 80, np.random.default_rng(4), SMALL, per_decision=3)
    n = rows["boards"].shape[0]
    assert 40 < n <= 80 and set(rows) == set(SHARD_FIELDS)
    # the first half are the plain anchors' first plays; the rest are replies to them
    np.testing.assert_array_equal(rows["boards"][:40], plain["boards"][:40])
    np.testing.assert_allclose(rows["probs"], ev.probabilities(rows["boards"]), atol=1e-6)
    assert (rows["rank0"] == -1).all()
    again = anchor_rows(ev, 80, np.random.default_rng(4), SMALL, per_decision=3, replies=0.5)
    np.testing.assert_array_equal(rows["boards"], again["boards"])
    with pytest.raises(ValueError, match="replies"):
        anchor_rows(ev, 80, np.random.default_rng(4), SMALL, replies=1.0)
    with pytest.raises(ValueError, match="bad anchor settings"):
        AnchorConfig(replies=-0.1)


def test_fit_select_last_runs_every_epoch_and_keeps_the_last_weights(tmp_path: Path) -> None:
    """A refit from a net already at its best held-out loss (anchors to learn) must not
    hand the start back: ``select=last`` ignores patience and keeps the final weights."""
    teacher = _evaluator(5)
    label_shard(teacher, tmp_path, SMALL, seed=2, progress=False)
    rows = load_rows([tmp_path])
    net = _net(6)
    start = copy.deepcopy(net.state_dict())
    cfg = FitConfig(lr=1e-2, batch=16, max_epochs=3, patience=1, holdout=0.3, select="last")
    fitted, res = fit(net, _spec(), rows, cfg, seed=0)
    assert res.epochs == pytest.approx(3.0)
    assert any(not torch.equal(start[k], v) for k, v in fitted.state_dict().items())
    with pytest.raises(ValueError, match="select"):
        FitConfig(select="first")


def test_fit_init_takes_a_checkpoint_and_refuses_a_missing_one(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="checkpoint file"):
        FitConfig(init=str(tmp_path / "missing.pt"))
    start = _save(tmp_path / "start.pt", _net(11, hidden=(12,)), _spec(hidden=(12,)))
    assert FitConfig(init=str(start)).init == str(start)


def test_label_rollout_shares_dice_within_a_decision() -> None:
    ev = _evaluator()
    boards, dice = collect_decisions(ev, 4, np.random.default_rng(2), SMALL)
    afters, _ = legal_afterstates_batch(boards[:1], dice[:1])
    two = np.repeat(afters[:1], 2, axis=0)
    same = rollout(ev, two, groups=np.array([5, 5]), trials=4, horizon=6, seed=3)
    np.testing.assert_allclose(same[0], same[1], atol=1e-6)  # same group: same dice
    other = rollout(ev, two, groups=np.array([5, 6]), trials=4, horizon=6, seed=3)
    assert np.abs(other[0] - other[1]).max() > 1e-3
    np.testing.assert_allclose(  # horizon 0 is the evaluator itself
        rollout(ev, afters, groups=np.zeros(len(afters), np.int64), trials=2, horizon=0, seed=0),
        ev.probabilities(afters),
        atol=1e-6,
    )
    won = np.zeros((1, 26), dtype=np.int8)
    won[0, 13:20] = -2
    won[0, 20] = -1  # the mover has borne off all 15, the opponent none: a gammon
    np.testing.assert_allclose(
        rollout(ev, won, groups=np.zeros(1, np.int64), trials=2, horizon=4, seed=0),
        [[1, 1, 0, 0, 0]],
    )


def test_outcome_labels_are_the_results_of_whole_games() -> None:
    ev = _evaluator()
    boards, probs, game = collect_outcomes(ev, 20, np.random.default_rng(5), SMALL)
    assert sorted(np.unique(game).tolist()) == list(range(20))  # every game, once, whole
    again = collect_outcomes(ev, 20, np.random.default_rng(5), SMALL)
    np.testing.assert_array_equal(boards, again[0])  # a pure function of the rng
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int8)
    for g in range(20):
        path, res = boards[game == g], probs[game == g]
        # a real game: each afterstate is a legal play (or a pass) of some roll from the
        # position before it, the opening position first, then the flipped afterstate
        before = np.concatenate([start_boards(1), flip_boards(path[:-1])])
        for pos, after in zip(before, path, strict=True):
            reach, _ = legal_afterstates_batch(np.repeat(pos[None], len(rolls), 0), rolls)
            assert (reach == after).all(axis=1).any() or (after == pos).all()
        # the last afterstate ends the game: the mover bore off, and its row is a win
        assert (path[-1] <= 0).all() and res[-1, 0] == 1.0
        # rows alternate winner and loser going back, with the same gammon flags mirrored
        win = res[-1]
        for t in range(path.shape[0]):
            expect = (
                win if (path.shape[0] - 1 - t) % 2 == 0 else win[[0, 3, 4, 1, 2]] * [0, 1, 1, 1, 1]
            )
            np.testing.assert_array_equal(res[t], expect)
        assert win[2] <= win[1] <= win[0]  # a backgammon is a gammon is a win
    with pytest.raises(ValueError, match="at least one game"):
        collect_outcomes(ev, 0, np.random.default_rng(0), SMALL)


def test_shards_with_outcome_games(tmp_path: Path) -> None:
    ev = _evaluator()
    cfg = LabelConfig(shards=2, decisions_per_shard=6, outcome_games=3, parallel_games=8)
    label_shard(ev, tmp_path, cfg, seed=1, progress=False)
    rows = load_rows([tmp_path])
    games = rows["decision"] >= cfg.shards * cfg.decisions_per_shard
    assert np.unique(rows["decision"][games]).size == 2 * 3  # one id per game, no clash
    assert np.unique(rows["decision"][~games]).size == 2 * 6
    assert set(np.unique(rows["probs"][games][:, 0]).tolist()) == {0.0, 1.0}
    assert not rows["disagree"][games].any()
    np.testing.assert_allclose(
        rows["probs0"][games], ev.probabilities(rows["boards"][games]), atol=1e-6
    )
    only = LabelConfig(shards=1, decisions_per_shard=0, outcome_games=2, parallel_games=4)
    label_shard(ev, tmp_path / "only", only, progress=False)
    assert load_rows([tmp_path / "only"])["probs"].shape[0] > 2
    with pytest.raises(ValueError, match="shard would be empty"):
        LabelConfig(decisions_per_shard=0)
    with pytest.raises(ValueError, match="must be >= 0"):
        LabelConfig(outcome_games=-1)


def test_label_shard_splits_work_and_skips_finished_shards(tmp_path: Path) -> None:
    ev = _evaluator()
    a = label_shard(ev, tmp_path / "a", SMALL, k=0, num=2, seed=1, generation=1, progress=False)
    assert [p.name for p in a] == ["shard_00000.npz", "shard_00002.npz"]
    assert not shard_path(tmp_path / "a", 1).exists()
    b = label_shard(ev, tmp_path / "a", SMALL, k=1, num=2, seed=1, generation=1, progress=False)
    assert [p.name for p in b] == ["shard_00001.npz"]
    whole = label_shard(ev, tmp_path / "b", SMALL, seed=1, generation=1, progress=False)
    for p, q in zip(sorted(a + b), whole, strict=True):
        x, meta = read_shard(p)
        y, _ = read_shard(q)
        assert meta["generation"] == 1 and meta["label"]["ply"] == 1
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])
    with pytest.raises(ValueError, match="0 <= k < num"):
        label_shard(ev, tmp_path / "c", SMALL, k=2, num=2)
    with pytest.raises(ValueError, match="shards=0"):
        LabelConfig(shards=0)
    with pytest.raises(ValueError, match="ply or rollout"):
        LabelConfig(method="guess")


def test_killed_labelling_resumes_with_identical_shards(tmp_path: Path) -> None:
    teacher = _save(tmp_path / "teacher.pt", _net(), _spec())
    script = textwrap.dedent(
        f"""
        import sys, time
        from nard_rl.nets.evaluator import load_evaluator
        from nard_rl.training.supervised.label import LabelConfig, label_shard
        cfg = LabelConfig(shards=12, decisions_per_shard=6, parallel_games=16, chunk=3)
        ev = load_evaluator({str(teacher)!r})
        for i in range(12):  # shard by shard, paced, so that the kill lands part-way
            label_shard(ev, sys.argv[1], cfg, k=i, num=12, seed=1, progress=False)
            time.sleep(0.5)
        """
    )
    folder = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", script, str(folder)])
    deadline = time.time() + 120
    while time.time() < deadline and len(list(folder.glob("shard_*.npz"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = sorted(folder.glob("shard_*.npz"))
    assert 2 <= len(done) < 12, "the run should be killed part-way"
    stamps = {p: p.stat().st_mtime_ns for p in done}
    cfg = LabelConfig(shards=12, decisions_per_shard=6, parallel_games=16, chunk=3)
    ev = load_evaluator(str(teacher))  # the killed run's teacher (with the bear-off database)
    label_shard(ev, folder, cfg, seed=1, progress=False)
    assert len(list(folder.glob("shard_*.npz"))) == 12
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # kept, not redone
    for i in (0, len(done), 11):  # before, at and after the kill: as an unbroken run
        fresh = label_shard(
            ev,
            tmp_path / "fresh",
            LabelConfig(**{**cfg.__dict__, "shards": i + 1}),
            seed=1,
            k=i,
            num=i + 1,
            progress=False,
        )[0]
        x, _ = read_shard(shard_path(folder, i))
        y, _ = read_shard(fresh)
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])


def test_grow_net_keeps_the_function() -> None:
    small = _net(3, "extended", (8,))
    big = grow_net(small, _spec("extended", (8,)), _spec("contact", (16,)))
    boards, _ = collect_decisions(_evaluator(), 40, np.random.default_rng(4), SMALL)
    with torch.no_grad():
        a = small(torch.from_numpy(get_encoding("extended").encode(boards)))
        b = big(torch.from_numpy(get_encoding("contact").encode(boards)))
    torch.testing.assert_close(a, b)
    assert big.hidden == (16,) and big.inputs == get_encoding("contact").size
    with pytest.raises(ValueError, match="scratch"):
        grow_net(small, _spec("extended", (8,)), _spec("tesauro198", (8,)))
    with pytest.raises(ValueError, match="scratch"):
        grow_net(small, _spec("extended", (8,)), _spec("extended", (8, 8)))
    with pytest.raises(ValueError, match="shrink"):
        grow_net(small, _spec("extended", (8,)), _spec("extended", (4,)))
    with pytest.raises(ValueError, match=r"softmax6.*scratch"):
        grow_net(small, _spec("extended", (8,)), _spec("extended", (8,), "softmax6"))


def test_the_class_cross_entropy_is_the_kl_divergence_of_the_six_outcomes() -> None:
    target = torch.tensor([[0.6, 0.2, 0.05, 0.1, 0.01], [0.3, 0.0, 0.0, 0.4, 0.1]])
    t = torch.tensor([[0.4, 0.15, 0.05, 0.3, 0.09, 0.01], [0.3, 0.0, 0.0, 0.3, 0.3, 0.1]])
    pred = torch.tensor([[0.5, 0.25, 0.1, 0.2, 0.05], [0.5, 0.1, 0.0, 0.3, 0.1]])
    c = torch.tensor([[0.25, 0.15, 0.1, 0.3, 0.15, 0.05], [0.4, 0.1, 0.0, 0.2, 0.2, 0.1]])
    want = (t * (t.clamp_min(1e-12).log() - c.clamp_min(1e-7).log())).sum(1)
    torch.testing.assert_close(_loss(pred, target, "ce"), want)
    assert _loss(target, target, "ce").abs().max().item() < 1e-6  # a perfect fit scores 0
    assert (_loss(pred, target, "ce") > 0.01).all()


@pytest.mark.parametrize("loss", ["ce", "mse"])
def test_a_softmax_student_fits_with_either_loss(tmp_path: Path, loss: str) -> None:
    label_shard(_evaluator(5), tmp_path, SMALL, seed=2, progress=False)
    rows = load_rows([tmp_path])
    cfg = FitConfig(lr=1e-2, batch=16, max_epochs=20, patience=5, holdout=0.3, loss=loss)
    net, res = fit(_net(6, head="softmax6"), _spec(head="softmax6"), rows, cfg, seed=0)
    assert res.best_heldout_loss < 0.5 * res.initial_heldout_loss
    with pytest.raises(ValueError, match=r"fit\.loss"):
        fit(net, _spec(head="softmax6"), rows, FitConfig(loss="l1"), seed=0)


def test_anchors_train_but_are_never_held_out(tmp_path: Path) -> None:
    """The teacher fits its own 0-ply anchors exactly: scored, they would mask the labels."""
    teacher = _evaluator(5)
    label_shard(teacher, tmp_path, SMALL, seed=2, progress=False)
    rows = load_rows([tmp_path])
    anchors = anchor_rows(teacher, 200, np.random.default_rng(1), SMALL)
    anchors["generation"] = np.full(anchors["boards"].shape[0], 1)
    both = merge_rows(rows, anchors)
    cfg = FitConfig(lr=1e-2, batch=16, max_epochs=1, patience=5, holdout=0.3)
    _, alone = fit(_net(6), _spec(), rows, cfg, seed=0)
    _, mixed = fit(_net(6), _spec(), both, cfg, seed=0)
    assert mixed.heldout_rows == alone.heldout_rows
    assert mixed.train_rows == alone.train_rows + both["boards"].shape[0] - rows["boards"].shape[0]
    assert mixed.initial_heldout_loss == pytest.approx(alone.initial_heldout_loss)


def test_fit_lowers_the_heldout_loss_and_holds_out_whole_decisions(tmp_path: Path) -> None:
    teacher = _evaluator(5)
    label_shard(teacher, tmp_path, SMALL, seed=2, progress=False)
    rows = load_rows([tmp_path])
    held = heldout_mask(rows["decision"], rows["generation"], 0.3)
    for d in np.unique(rows["decision"]):
        assert len(set(held[rows["decision"] == d].tolist())) == 1
    cfg = FitConfig(lr=1e-2, batch=16, max_epochs=20, patience=5, holdout=0.3)
    net, res = fit(_net(6), _spec(), rows, cfg, seed=0)
    assert res.best_heldout_loss < 0.5 * res.initial_heldout_loss
    assert res.train_rows + res.heldout_rows == len(rows["boards"])
    assert not net.training


def test_cosine_decay_runs_from_lr_to_lr_final_and_is_validated(tmp_path: Path) -> None:
    assert cosine_lr(1e-3, 1e-5, 0, 101) == pytest.approx(1e-3)
    assert cosine_lr(1e-3, 1e-5, 50, 101) == pytest.approx((1e-3 + 1e-5) / 2)
    assert cosine_lr(1e-3, 1e-5, 100, 101) == pytest.approx(1e-5)
    lrs = [cosine_lr(1e-3, 1e-5, s, 101) for s in range(101)]
    assert all(a >= b for a, b in itertools.pairwise(lrs))
    teacher = _evaluator(5)
    label_shard(teacher, tmp_path, SMALL, seed=2, progress=False)
    rows = load_rows([tmp_path])
    with pytest.raises(ValueError, match="lr_final"):
        fit(_net(6), _spec(), rows, FitConfig(lr=1e-3, lr_final=1e-2), seed=0)
    cfg = FitConfig(lr=1e-2, lr_final=1e-4, batch=16, max_epochs=20, patience=40, holdout=0.3)
    _, res = fit(_net(6), _spec(), rows, cfg, seed=0)
    assert res.best_heldout_loss < 0.5 * res.initial_heldout_loss


def test_gate_accepts_only_a_clear_winner(tmp_path: Path) -> None:
    from nard_rl.nets.paths import default_checkpoint_path

    weak = _save(tmp_path / "weak.pt", _net(7), _spec())
    strong = default_checkpoint_path()
    cfg = GateConfig(games=60)
    won = gate(strong, weak, cfg)
    assert won["accepted"] and won["ppg"] > won["margin"] > 0
    same = gate(strong, strong, cfg)  # identical players on shared dice: exactly even
    assert same["ppg"] == 0.0 and not same["accepted"]


def test_gate_with_the_race_net_plays_both_nets_with_it(tmp_path: Path) -> None:
    from nard_rl.nets.paths import default_checkpoint_path

    strong = default_checkpoint_path()
    res = gate(strong, strong, GateConfig(games=20), race_net=True)
    assert res["race_net"] and res["ppg"] == 0.0
    assert not gate(strong, strong, GateConfig(games=20))["race_net"]


def test_race_suffix_pairs_a_checkpoint_with_the_race_net(tmp_path: Path) -> None:
    from nard_rl.nets.evaluator import CompositeEvaluator
    from nard_rl.players.base import make_player, parse_player_spec

    path = _save(tmp_path / "c.pt", _net(3), _spec())
    paired_spec = parse_player_spec(f"{path}+race:1")
    assert (paired_spec.path, paired_spec.race_net, paired_spec.ply) == (str(path), True, 1)
    assert paired_spec.is_network and not parse_player_spec(str(path)).race_net
    assert not parse_player_spec("pubeval+race").is_network
    plain = load_evaluator(str(path))
    paired = load_evaluator(f"{path}+race")
    assert isinstance(paired, CompositeEvaluator)
    assert plain.race is None and paired.race is not None
    with pytest.raises(ValueError, match="race_net=False"):
        load_evaluator(f"{path}+race", race_net=False)
    assert make_player(f"{path}+race:1").name == "c+race:1"


def test_tiny_pipeline_end_to_end_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    init = _save(tmp_path / "gen0.pt", _net(8), _spec())
    args = [
        "pipeline",
        "supervised=tiny",
        f"out_dir={tmp_path}",
        f"init={init}",
        "generations=1",
        "label.shards=2",
        "label.decisions_per_shard=20",
        "gate.games=60",
        "student.hidden=[12]",
        "progress=false",
    ]
    assert main(args) == 0
    run = tmp_path / "tiny"
    assert (run / "gen_001" / "gate.json").exists()
    cand = load_checkpoint(run / "gen_001" / "candidate.pt")
    assert cand["spec"]["hidden"] == [12]
    stages = [h.get("stage") for h in cand["extra"]["history"]]
    assert stages[-3:] == ["init", "label", "fit"]
    best = load_checkpoint(run / "best.pt")
    assert best["extra"]["history"][-1]["stage"] in ("gate", "init")
    mtime = (run / "gen_001" / "candidate.pt").stat().st_mtime_ns
    capsys.readouterr()
    with pytest.raises(SystemExit, match="already holds a run"):  # a fresh start: refused
        main(args)
    assert main([*args, "resume=auto"]) == 0  # finished: nothing is redone
    assert (run / "gen_001" / "candidate.pt").stat().st_mtime_ns == mtime
    assert "fitting" not in capsys.readouterr().out


def test_pipeline_fits_with_anchor_rows(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    init = _save(tmp_path / "gen0.pt", _net(8), _spec())
    args = ["pipeline", "supervised=tiny", f"out_dir={tmp_path}", f"init={init}"]
    args += ["generations=1", "label.shards=1", "stage=label", "progress=false"]
    assert main(args) == 0
    fit_args = [*args[:-2], "stage=fit", "progress=false", "anchors.rows=50"]
    assert main([*fit_args, "resume=auto"]) == 0
    out = capsys.readouterr().out
    cand = load_checkpoint(tmp_path / "tiny" / "gen_001" / "candidate.pt")
    label = next(h for h in cand["extra"]["history"] if h.get("stage") == "label")
    made = label["anchors"]["made"]
    assert label["anchors"]["rows"] == 50 and 0 < made <= 50
    assert f"({made:,} anchors)" in out


def test_pipeline_refits_a_given_checkpoint_with_reply_anchors(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``fit.init=PATH`` starts the student from another run's net (the teacher still
    labels and anchors); a missing file stops the run before it labels anything."""
    init = _save(tmp_path / "gen0.pt", _net(8), _spec())
    other = _save(tmp_path / "other.pt", _net(9, hidden=(12,)), _spec(hidden=(12,)))
    args = ["pipeline", "supervised=tiny", f"out_dir={tmp_path}", f"init={init}"]
    args += ["generations=1", "label.shards=1", "label.decisions_per_shard=10"]
    args += ["gate.games=20", "student.hidden=[12]", "progress=false"]
    with pytest.raises(SystemExit):
        main([*args, "name=bad", f"fit.init={tmp_path / 'none.pt'}"])
    assert "fit.init must be previous, scratch or a checkpoint file" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "gen_001" / "shards").exists()
    refit = ["fit.max_epochs=1", "fit.select=last", "anchors.rows=40", "anchors.replies=0.5"]
    assert main([*args, "name=r", f"fit.init={other}", *refit]) == 0
    cand = load_checkpoint(tmp_path / "r" / "gen_001" / "candidate.pt")
    assert cand["spec"]["hidden"] == [12]
    fit_entry = next(h for h in cand["extra"]["history"] if h.get("stage") == "label")
    assert fit_entry["anchors"]["replies"] == 0.5


def test_pipeline_takes_the_rules_group_like_train(tmp_path: Path) -> None:
    """``rules=mars`` selects the same config group as in ``nard train``; the labels and
    the gate then play by the mars rules (the pip-waste move generator), and a standard
    teacher's student is a mars net."""
    init = _save(tmp_path / "std0.pt", _net(3), _spec())
    args = [
        "pipeline",
        "supervised=tiny",
        "rules=mars",
        f"out_dir={tmp_path}",
        f"init={init}",
        "name=m",
        "generations=1",
        "label.shards=1",
        "label.decisions_per_shard=10",
        "gate.games=20",
        "progress=false",
    ]
    assert main(args) == 0
    assert load_checkpoint(tmp_path / "m" / "gen_001" / "candidate.pt")["spec"]["rules"] == "mars"
    best = load_checkpoint(tmp_path / "m" / "best.pt")
    init_entry = next(h for h in best["extra"]["history"] if h.get("stage") == "init")
    assert init_entry["config"]["rules"] == {"name": "mars"}
    shards = tmp_path / "m" / "gen_001" / "shards"
    data, meta = read_shard(shard_path(shards, 0))
    assert meta["rules"] == "mars" and len(data["decision"]) > 0
    assert len(load_rows([shards], rules="mars")["boards"]) == len(data["boards"])
    with pytest.raises(ValueError, match="labelled under mars rules, not standard"):
        load_rows([shards], rules="standard")


def test_promote_accepts_a_rejected_candidate_only_with_a_note(tmp_path: Path) -> None:
    """``stage=promote`` is the recorded human override of a gate: the rejected candidate
    becomes the teacher with the note in its history; nothing else is promotable."""
    import json

    from nard_rl.training.supervised.pipeline import current_generation, promote

    run = tmp_path / "r"
    (run / "gen_001").mkdir(parents=True)
    _save(run / "best.pt", _net(1), _spec())
    _save(run / "gen_001" / "candidate.pt", _net(2), _spec())
    verdict = {"ppg": 0.004, "se": 0.003, "margin": 0.006, "games": 100, "accepted": False}
    (run / "gen_001" / "gate.json").write_text(json.dumps(verdict))
    with pytest.raises(ValueError, match="needs note"):
        promote(run, "  ")
    assert main(["pipeline", f"out_dir={tmp_path}", "name=r", "stage=promote", "note=why"]) == 0
    best = load_checkpoint(run / "best.pt")
    cand = load_checkpoint(run / "gen_001" / "candidate.pt")
    assert all(torch.equal(best["model"][k], cand["model"][k]) for k in cand["model"])
    entry = best["extra"]["history"][-1]
    assert entry["stage"] == "promote" and entry["note"] == "why" and entry["ppg"] == 0.004
    assert (run / "gen_001.pt").exists() and current_generation(run) == 2
    assert json.loads((run / "gen_001" / "gate.json").read_text()) == verdict  # untouched
    with pytest.raises(RuntimeError, match="already accepted"):
        promote(run, "again")
    with pytest.raises(RuntimeError, match="no gated generation"):
        promote(tmp_path / "empty", "why")
    with pytest.raises(SystemExit):  # the command reports the same error and fails
        main(["pipeline", f"out_dir={tmp_path}", "name=new", "stage=promote", "note=x"])
    assert not (tmp_path / "new" / "best.pt").exists()  # no run was started


def _one_label_shard(out_dir: Path, init: Path, decisions: int, *overrides: str) -> list[str]:
    """``nard pipeline`` arguments labelling one small shard of a tiny run."""
    return [
        "pipeline",
        "supervised=tiny",
        f"out_dir={out_dir}",
        f"init={init}",
        "stage=label",
        "label.shards=1",
        f"label.decisions_per_shard={decisions}",
        "progress=false",
        *overrides,
    ]


@pytest.mark.parametrize("race_net", [False, True])
def test_label_race_net_pairs_the_teacher_with_the_shipped_race_net(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, race_net: bool
) -> None:
    """``label.race_net=true`` labels with the current net plus the rule set's race net
    (the default player's make-up); the shard's recorded config says which it was."""
    import nard_rl.training.supervised.pipeline as pipeline
    from nard_rl.nets.evaluator import load_evaluator

    seen: list[object] = []
    seen_devices: list[object] = []

    def spy(spec: str, **kw: object) -> object:
        seen_devices.append(kw.pop("device"))
        ev = load_evaluator(spec, device="cpu", **kw)  # type: ignore[arg-type]
        seen.append(ev.race)  # type: ignore[attr-defined]
        return ev

    monkeypatch.setattr(pipeline, "load_evaluator", spy)
    # the run's device reaches the teacher (named here without needing the hardware)
    monkeypatch.setattr(pipeline, "resolve_device", lambda name: torch.device(name))
    init = _save(tmp_path / "gen0.pt", _net(3), _spec())
    args = _one_label_shard(tmp_path, init, 5, f"label.race_net={race_net}", "device=cuda:3")
    assert main(args) == 0
    assert len(seen) == 1 and (seen[0] is not None) == race_net
    assert seen_devices == ["cuda:3"]  # labelling runs the teacher's net on the run's device
    _, meta = read_shard(shard_path(tmp_path / "tiny" / "gen_001" / "shards", 0))
    assert meta["label"]["race_net"] is race_net


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_labels_on_cuda_match_the_cpu(tmp_path: Path) -> None:
    """``device=cuda`` labels with the teacher's net on the GPU; the labels are the CPU's
    up to float rounding (the positions, a pure function of the seed, are identical)."""
    init = _save(tmp_path / "gen0.pt", _net(5), _spec())
    shards = {}
    for dev in ("cpu", "cuda"):
        assert main(_one_label_shard(tmp_path / dev, init, 8, f"device={dev}")) == 0
        shards[dev], _ = read_shard(shard_path(tmp_path / dev / "tiny" / "gen_001" / "shards", 0))
    np.testing.assert_array_equal(shards["cpu"]["boards"], shards["cuda"]["boards"])
    np.testing.assert_allclose(shards["cpu"]["probs"], shards["cuda"]["probs"], atol=1e-4)


def test_resuming_refuses_other_settings_or_another_pruner(tmp_path: Path) -> None:
    from nard_rl.nets.pruning import Pruner

    ev = _evaluator()
    one = LabelConfig(shards=2, decisions_per_shard=4, parallel_games=8)
    label_shard(ev, tmp_path, one, k=0, num=2, seed=1, progress=False)
    _, meta = read_shard(shard_path(tmp_path, 0))
    assert meta["pruner"] is None  # a bare net: every reply scored
    with pytest.raises(ValueError, match=r"other settings \(ply: 1 -> 2\)"):
        label_shard(ev, tmp_path, replace(one, ply=2), k=1, num=2, seed=1, progress=False)
    # the same job resumes; a pruner now attached to the evaluator is another job
    enc = get_encoding("tesauro198")
    spec = NetSpec(enc.name, enc.version, enc.size, (8,), "sigmoid", "standard")
    torch.manual_seed(0)
    ev.pruner = Pruner(spec.build().eval(), spec, keep=2)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="pruner: None -> 'prune tesauro198x8 keep 2"):
        label_shard(ev, tmp_path, one, k=1, num=2, seed=1, progress=False)
    del ev.pruner  # type: ignore[attr-defined]
    label_shard(ev, tmp_path, one, k=1, num=2, seed=1, progress=False)
    assert shard_path(tmp_path, 1).exists()
