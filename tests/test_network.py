"""The equity network: consistent probabilities, equities per rule set, safe checkpoints."""

from __future__ import annotations

import pickle

import pytest
import torch

from nard_rl.engine.rules import MARS, STANDARD
from nard_rl.network import (
    EquityNet,
    NetSpec,
    cubeless_equity,
    load_checkpoint,
    load_network,
    save_checkpoint,
    swap_sides,
)


def test_probabilities_are_consistent() -> None:
    torch.manual_seed(0)
    net = EquityNet(198, (32,))
    with torch.no_grad():
        for p in net.head.parameters():
            p.normal_(0, 5.0)  # extreme logits stress the construction
        probs = net(torch.rand(4096, 198) * 3)
    win, wg, wbg, lg, lbg = probs.unbind(1)
    assert torch.all((probs >= 0) & (probs <= 1))
    assert torch.all(wg <= win + 1e-7) and torch.all(wbg <= wg + 1e-7)
    assert torch.all(lg <= 1 - win + 1e-7) and torch.all(lbg <= lg + 1e-7)


def test_swap_sides_is_an_involution_and_exchanges_roles() -> None:
    p = torch.tensor([[0.6, 0.2, 0.05, 0.1, 0.01]])
    s = swap_sides(p)
    assert torch.allclose(s, torch.tensor([[0.4, 0.1, 0.01, 0.2, 0.05]]))
    assert torch.allclose(swap_sides(s), p)


def test_equity_per_rule_set() -> None:
    p = torch.tensor([[0.6, 0.2, 0.05, 0.1, 0.01]])
    # R25: 2w-1 + (wg-lg) + (wbg-lbg)
    assert cubeless_equity(p, STANDARD).item() == pytest.approx(0.2 + 0.1 + 0.04)
    # R26: backgammons count as gammons
    bg2 = STANDARD.with_options(backgammon_value=2)
    assert cubeless_equity(p, bg2).item() == pytest.approx(0.3)
    # R28: mars counts 2, no x3
    assert cubeless_equity(p, MARS).item() == pytest.approx(0.3)
    # R32: Jacoby, cube unturned: singles only; turned: full
    jac = STANDARD.with_options(jacoby=True)
    assert cubeless_equity(p, jac).item() == pytest.approx(0.2)
    assert cubeless_equity(p, jac, cube_turned=True).item() == pytest.approx(0.34)
    # a certain gammon win is worth 2, its mirror -2
    g = torch.tensor([[1.0, 1.0, 0.0, 0.0, 0.0]])
    assert cubeless_equity(g).item() == pytest.approx(2.0)
    assert cubeless_equity(swap_sides(g)).item() == pytest.approx(-2.0)


def _spec() -> NetSpec:
    from nard_rl.encoding import get_encoding

    enc = get_encoding("tesauro198")
    return NetSpec("tesauro198", enc.version, enc.size, (16,), "sigmoid", "standard")


def test_checkpoint_round_trip_is_weights_only(tmp_path) -> None:
    spec = _spec()
    net = spec.build()
    path = tmp_path / "c.pt"
    save_checkpoint(path, net, spec, games=123, step=7, config={"a": 1})
    net2, spec2, ckpt = load_network(path)
    assert spec2 == spec and ckpt["games"] == 123 and ckpt["step"] == 7
    x = torch.rand(5, spec.inputs)
    with torch.no_grad():
        assert torch.equal(net(x), net2(x))
    assert not list(tmp_path.glob("*.tmp"))  # the temporary file was renamed away


def test_loading_refuses_pickled_code(tmp_path) -> None:
    class Evil:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (print, ("pwned",))

    path = tmp_path / "evil.pt"
    torch.save({"format": 1, "x": Evil()}, path)
    with pytest.raises(pickle.UnpicklingError):
        load_checkpoint(path)


def test_encoding_version_mismatch_is_refused(tmp_path) -> None:
    spec = _spec()
    bad = NetSpec(
        spec.encoding,
        spec.encoding_version + 1,
        spec.inputs,
        spec.hidden,
        spec.activation,
        spec.rules,
    )
    save_checkpoint(tmp_path / "old.pt", spec.build(), bad, games=0, step=0)
    with pytest.raises(ValueError, match=r"v\d"):
        load_network(tmp_path / "old.pt")


def test_missing_checkpoint_names_the_path(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.pt"):
        load_checkpoint(tmp_path / "nope.pt")


def test_garbage_file_is_a_clear_value_error(tmp_path) -> None:
    path = tmp_path / "garbage.pt"
    path.write_bytes(b"this is not a checkpoint")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(path)
