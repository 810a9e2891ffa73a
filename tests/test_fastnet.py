"""The compiled forward pass equals torch's, freshly compiled and loaded from the numba
cache; the pruning net only ever narrows what the full evaluator scores, and with the
shipped one the search still chooses the exact search's plays."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from nard_rl.engine.batch import start_boards
from nard_rl.engine.movegen import legal_afterstates_batch
from nard_rl.nets.encoding import get_encoding
from nard_rl.nets.evaluator import NetEvaluator, load_evaluator
from nard_rl.nets.fastnet import BoardNet, FusedNet, supports
from nard_rl.nets.network import NetSpec
from nard_rl.nets.pruning import Pruner, pruner_path, top_per_segment
from nard_rl.search.nply import Search
from nard_rl.training.supervised.label import LabelConfig, collect_decisions


def _net(
    hidden: tuple[int, ...],
    scale: float = 1.0,
    seed: int = 0,
    activation: str = "sigmoid",
    encoding: str = "contact",
    head: str = "sigmoid5",
):
    enc = get_encoding(encoding)
    spec = NetSpec(enc.name, enc.version, enc.size, hidden, activation, "standard", head)
    torch.manual_seed(seed)
    net = spec.build().eval()
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
    return net, spec


def _afterstates(n: int = 600) -> np.ndarray:
    ev = load_evaluator("default")
    boards, dice = collect_decisions(
        ev, 60, np.random.default_rng(3), LabelConfig(sample=0.5, parallel_games=16)
    )
    afters, _ = legal_afterstates_batch(boards, dice)
    return np.concatenate([afters, start_boards(1)])[:n]


@pytest.mark.parametrize(
    ("hidden", "scale", "head"),
    [
        ((64,), 1.0, "sigmoid5"),
        ((32, 16), 1.0, "sigmoid5"),
        ((40,), 25.0, "sigmoid5"),
        ((8, 8, 8), 4.0, "sigmoid5"),
        ((64,), 1.0, "softmax6"),
        ((32, 16), 8.0, "softmax6"),
    ],
)
def test_fused_forward_equals_torch(hidden: tuple[int, ...], scale: float, head: str) -> None:
    """Including saturated units (scale 25 pushes pre-activations far past +-30), for both
    heads and for two and three hidden layers."""
    net, spec = _net(hidden, scale, head=head)
    x = get_encoding(spec.encoding).encode(_afterstates())
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    got = FusedNet(net)(x)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.abs(got - want).max() < 1e-4
    # the five probabilities stay consistent: wg <= win, wbg <= wg, lbg <= lg <= 1 - win
    assert (got[:, 1] <= got[:, 0] + 1e-7).all() and (got[:, 2] <= got[:, 1] + 1e-7).all()
    assert (got[:, 4] <= got[:, 3] + 1e-7).all() and (got[:, 3] <= 1 - got[:, 0] + 1e-6).all()


@pytest.mark.parametrize("rows", [1, 3, 4, 5, 15, 16, 17, 37])
def test_fused_forward_handles_partial_blocks(rows: int) -> None:
    """The dense layers run over blocks of rows, four at a time: any row count, whole
    blocks or not, gives torch's answer row for row."""
    net, spec = _net((24, 12), 4.0)
    x = get_encoding(spec.encoding).encode(_afterstates())[:rows]
    assert x.shape[0] == rows
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    assert np.abs(FusedNet(net)(x) - want).max() < 1e-4


def test_shipped_net_fused_equals_torch_and_is_used() -> None:
    ev = load_evaluator("default")
    contact = ev.contact
    assert contact.fused is not None
    afters = _afterstates()
    fast = contact.net_probabilities(afters)
    slow = NetEvaluator(contact.net, contact.spec).net_probabilities(afters)
    assert np.abs(fast - slow).max() < 1e-4


def test_fused_refuses_what_it_cannot_compute() -> None:
    relu, _ = _net((16,), activation="relu")
    assert not supports(relu)
    with pytest.raises(ValueError, match="sigmoid"):
        FusedNet(relu)
    net, _ = _net((16,))
    with pytest.raises(ValueError, match="shape"):
        FusedNet(net)(np.zeros((3, 10), dtype=np.float32))
    assert FusedNet(net)(np.zeros((0, 241), dtype=np.float32)).shape == (0, 5)
    # a net being trained keeps the torch path: NetEvaluator is not fast unless asked
    assert NetEvaluator(*_net((16,))).fused is None


CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np, torch
    from nard_rl.nets.fastnet import FusedNet
    from nard_rl.nets.network import NetSpec
    torch.manual_seed(1)
    spec = NetSpec("contact", 1, 241, (24, 8), "sigmoid", "standard")
    net = spec.build().eval()
    x = (np.random.default_rng(0).random((50, 241)) < 0.2).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    print(float(np.abs(FusedNet(net)(x) - want).max()))
    """
)


def test_fused_kernel_cold_and_warm_cache(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    for _ in ("cold", "warm"):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        assert float(out.stdout.strip()) < 1e-4
    assert any((tmp_path / "cache").rglob("*.nbi"))


def test_top_per_segment_matches_a_sort_per_segment() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 12, size=40)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    values = rng.normal(size=offsets[-1])
    for keep in (1, 3, 5):
        got = top_per_segment(values, offsets, keep)
        for s in range(40):
            seg = values[offsets[s] : offsets[s + 1]]
            want = np.zeros(seg.size, dtype=bool)
            want[np.argsort(-seg, kind="stable")[:keep]] = True
            assert np.array_equal(got[offsets[s] : offsets[s + 1]], want)


@pytest.mark.parametrize("margin", [0.0, 0.3, 1.0])
def test_top_per_segment_with_a_margin_drops_what_lies_too_far_below_the_best(
    margin: float,
) -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 12, size=60)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    values = rng.normal(size=offsets[-1])
    for keep in (1, 3, 5):
        got = top_per_segment(values, offsets, keep, margin)
        for s in range(60):
            seg = values[offsets[s] : offsets[s + 1]]
            want = np.zeros(seg.size, dtype=bool)
            want[np.argsort(-seg, kind="stable")[:keep]] = True
            want &= seg >= seg.max() - margin
            assert np.array_equal(got[offsets[s] : offsets[s + 1]], want)
            assert want.any()  # the best always stays
    with pytest.raises(ValueError, match="margin"):
        top_per_segment(values, offsets, 3, -0.1)


@pytest.mark.skipif(pruner_path("standard") is None, reason="no shipped pruning net")
def test_the_prune_margin_narrows_only_one_ply_choices_and_never_leaks_into_values() -> None:
    ev = load_evaluator("default")
    boards, dice = collect_decisions(
        ev, 40, np.random.default_rng(3), LabelConfig(sample=0.3, parallel_games=16)
    )
    afters, offsets = legal_afterstates_batch(boards, dice)
    narrow, wide = Search(ev, prune_margin=0.0), Search(ev, prune_margin=np.inf)
    picks = narrow.choose_batch(boards, dice, afters, offsets, ply=1)
    wide.choose_batch(boards, dice, afters, offsets, ply=1)
    assert narrow.evaluated < wide.evaluated  # margin 0: one reply per roll, mostly
    assert ((picks >= 0) & (picks < np.diff(offsets))).all()
    # the values labels and cube decisions read stay those of the plain pruned search,
    # whatever a 1-ply choice left in the cache, and 2-ply choices do not see it either
    fresh = Search(ev, prune_margin=np.inf)
    assert np.array_equal(
        narrow.afterstate_probs(afters[:30], ply=1), fresh.afterstate_probs(afters[:30], ply=1)
    )
    assert np.array_equal(
        narrow.choose_batch(boards[:8], dice[:8], afters[: offsets[8]], offsets[:9], ply=2),
        fresh.choose_batch(boards[:8], dice[:8], afters[: offsets[8]], offsets[:9], ply=2),
    )
    with pytest.raises(ValueError, match="prune_margin"):
        Search(ev, prune_margin=-1.0)


def test_a_pruner_that_keeps_everything_changes_nothing() -> None:
    ev = load_evaluator("default")
    net, spec = _net((8,))
    wide = Pruner(net, spec, keep=10_000)
    boards, dice = collect_decisions(ev, 6, np.random.default_rng(5), LabelConfig(parallel_games=8))
    afters, _ = legal_afterstates_batch(boards, dice)
    exact = Search(ev, pruner=False).afterstate_probs(afters[:6], ply=2)
    same = Search(ev, pruner=wide).afterstate_probs(afters[:6], ply=2)
    assert np.array_equal(exact, same)
    # a narrow random pruner does change the answers (the option is really used)
    narrow = Search(ev, pruner=Pruner(net, spec, keep=1)).afterstate_probs(afters[:6], ply=1)
    assert not np.allclose(narrow, Search(ev, pruner=False).afterstate_probs(afters[:6], ply=1))


@pytest.mark.skipif(pruner_path("standard") is None, reason="no shipped pruning net")
def test_shipped_pruner_keeps_the_exact_search_choices() -> None:
    ev = load_evaluator("default")
    assert ev.pruner is not None and ev.pruner.rules.name == "standard"
    mars = load_evaluator("default", rules="mars").pruner
    assert mars is not None and mars.rules.name == "mars" and mars.name == "nard-prune-mars"
    boards, dice = collect_decisions(
        ev, 60, np.random.default_rng(11), LabelConfig(sample=0.3, parallel_games=16)
    )
    afters, offsets = legal_afterstates_batch(boards, dice)
    fast = Search(ev).choose_batch(boards, dice, afters, offsets, ply=1)
    exact = Search(ev, pruner=False).choose_batch(boards, dice, afters, offsets, ply=1)
    assert (fast == exact).mean() >= 0.9
    # and it is cheaper: far fewer afterstates reach the full evaluator
    s_fast, s_exact = Search(ev), Search(ev, pruner=False)
    s_fast.afterstate_probs(afters[:20], ply=1)
    s_exact.afterstate_probs(afters[:20], ply=1)
    assert s_fast.evaluated < 0.6 * s_exact.evaluated


def test_fastnet_does_not_import_torch() -> None:
    code = "import sys, nard_rl.nets.fastnet; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("scale", [1.0, 12.0])
def test_board_net_equals_the_fused_pass_on_encoded_rows(scale: float) -> None:
    """The per-point tables reproduce the encoding: bars, borne-off checkers and hits
    included (self-play afterstates have all three)."""
    net, _spec = _net((24,), scale, encoding="tesauro198")
    enc = get_encoding("tesauro198")
    afters = _afterstates()
    assert (afters[:, 25] > 0).any() or (afters[:, 0] < 0).any()
    want = FusedNet(net)(enc.encode(afters))
    got = BoardNet(net, enc)(afters)
    assert np.abs(got - want).max() < 1e-5


def test_board_net_refuses_what_it_cannot_compute() -> None:
    net, _spec = _net((8,))
    with pytest.raises(ValueError, match="point-separable"):
        BoardNet(net, get_encoding("contact"))
    deep, _ = _net((8, 8), encoding="tesauro198")
    with pytest.raises(ValueError, match="one hidden layer"):
        BoardNet(deep, get_encoding("tesauro198"))
    six, _ = _net((8,), encoding="tesauro198", head="softmax6")
    with pytest.raises(ValueError, match="five sigmoids"):
        BoardNet(six, get_encoding("tesauro198"))
    with pytest.raises(ValueError, match="shape"):
        BoardNet(_net((8,), encoding="tesauro198")[0], get_encoding("tesauro198"))(
            np.zeros((3, 24), dtype=np.int8)
        )


def test_a_pruner_on_raw_inputs_reads_the_boards_and_ranks_as_the_encoded_pass() -> None:
    net, spec = _net((16,), 3.0, encoding="tesauro198")
    pruner = Pruner(net, spec, keep=3)
    assert pruner.board_net is not None
    afters = _afterstates()
    via_rows = pruner.fused(pruner.enc.encode(afters))
    assert np.abs(pruner.board_net(afters) - via_rows).max() < 1e-5
    # an extended-input pruner has no board pass and still scores
    ext, ext_spec = _net((8,), encoding="extended")
    assert Pruner(ext, ext_spec).board_net is None


def test_pruner_identity_names_weights_and_width() -> None:
    net, spec = _net((16,), encoding="tesauro198")
    a = Pruner(net, spec, keep=4).identity()
    assert a == Pruner(net, spec, keep=4).identity()
    assert a != Pruner(net, spec, keep=6).identity()
    other, _ = _net((16,), seed=1, encoding="tesauro198")
    assert a != Pruner(other, spec, keep=4).identity()
    assert "tesauro198x16 keep 4" in a


def test_kernels_compile_without_python_division_checks() -> None:
    """The speed of the sigmoid loops rests on numba's numpy error model (a zero-divisor
    check per division keeps them scalar): a kernel that loses it silently slows every
    search by about a fifth."""
    from nard_rl.nets import fastnet

    for kernel in (fastnet._forward, fastnet._board_forward, fastnet._dense_block):
        assert kernel.targetoptions.get("error_model") == "numpy", kernel
