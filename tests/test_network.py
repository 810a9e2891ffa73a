"""The equity network: consistent probabilities, equities per rule set, safe checkpoints."""

from __future__ import annotations

import pickle

import pytest
import torch

from nard_rl.engine.rules import MARS, STANDARD
from nard_rl.nets.network import (
    CheckpointError,
    EquityNet,
    NetSpec,
    classes_to_probs,
    cubeless_equity,
    load_checkpoint,
    load_network,
    probs_to_classes,
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


def test_softmax_head_gives_consistent_probabilities_summing_its_classes() -> None:
    torch.manual_seed(0)
    net = EquityNet(198, (32,), head="softmax6")
    assert net.head.out_features == 6
    with torch.no_grad():
        for p in net.head.parameters():
            p.normal_(0, 5.0)
        x = torch.rand(4096, 198) * 3
        probs = net(x)
        classes = torch.softmax(net.head(net.body(x)), dim=1)
    win, wg, wbg, lg, lbg = probs.unbind(1)
    assert torch.all(wg <= win + 1e-6) and torch.all(wbg <= wg + 1e-6)
    assert torch.all(lg <= 1 - win + 1e-6) and torch.all(lbg <= lg + 1e-6)
    # win = the three winning classes; P(lose gammon) = lose gammon + lose backgammon
    torch.testing.assert_close(win, classes[:, :3].sum(1))
    torch.testing.assert_close(lg, classes[:, 4] + classes[:, 5])
    torch.testing.assert_close(probs_to_classes(probs), classes, atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="head"):
        EquityNet(198, (8,), head="softmax5")


def test_classes_of_inconsistent_labels_are_clipped_and_renormalised() -> None:
    # an averaged label whose gammons exceed its wins by a rounding error
    c = probs_to_classes(torch.tensor([[0.5, 0.5000001, 0.1, 0.2, 0.25]]))
    assert torch.all(c >= 0) and c.sum().item() == pytest.approx(1.0)
    assert c[0, 0].item() == 0.0 and c[0, 4].item() == 0.0
    p = torch.tensor([[0.6, 0.2, 0.05, 0.1, 0.01]])
    torch.testing.assert_close(classes_to_probs(probs_to_classes(p)), p)


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
    from nard_rl.nets.encoding import get_encoding

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


def test_the_head_round_trips_and_older_checkpoints_read_as_five_sigmoids(tmp_path) -> None:
    base = _spec()
    six = NetSpec(**{**base.__dict__, "head": "softmax6"})
    net = six.build()
    save_checkpoint(tmp_path / "six.pt", net, six, games=0, step=0, config={})
    net2, spec2, _ = load_network(tmp_path / "six.pt")
    assert spec2.head == "softmax6" and net2.head_kind == "softmax6"
    x = torch.rand(5, six.inputs)
    with torch.no_grad():
        assert torch.equal(net(x), net2(x))
    old = base.to_dict()
    del old["head"]
    assert NetSpec.from_dict(old) == base
    with pytest.raises(ValueError, match="head must be one of"):
        NetSpec.from_dict({**old, "head": "tanh7"})
    # five-output weights under a softmax6 spec do not fit: named, not a raw error
    ckpt = torch.load(tmp_path / "six.pt", weights_only=True)
    ckpt["spec"]["head"] = "sigmoid5"
    torch.save(ckpt, tmp_path / "mixed.pt")
    with pytest.raises(CheckpointError, match="mixed"):
        load_network(tmp_path / "mixed.pt")


class _Evil:
    """Unpickling it would create a file: the proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (self.marker, "w"))


def test_loading_refuses_pickled_code_without_running_it(tmp_path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"format": 1, "spec": {}, "model": {"w": _Evil(str(marker))}}, path)
    with pytest.raises(CheckpointError, match=r"evil\.pt is not a nard-rl checkpoint.*no code"):
        load_network(path)
    assert not marker.exists()
    plain = tmp_path / "plain.pt"
    plain.write_bytes(pickle.dumps({"format": 1}))  # a pickle, not a torch file
    with pytest.raises(CheckpointError, match=r"plain\.pt is not a nard-rl checkpoint"):
        load_network(plain)


def _saved(tmp_path, name: str, **changes: object):  # type: ignore[no-untyped-def]
    spec = _spec()
    path = tmp_path / "ok.pt"
    save_checkpoint(path, spec.build(), spec, games=5, step=1)
    ckpt = torch.load(path, weights_only=True)
    for key, value in changes.items():
        if value is None:
            del ckpt[key]
        else:
            ckpt[key] = value
    out = tmp_path / name
    torch.save(ckpt, out)
    return out, ckpt


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"model": None}, "no model weights"),
        ({"model": {"body.0.weight": [1.0]}}, "no model weights"),
        ({"spec": None}, "no network spec"),
        ({"spec": "mlp"}, "no network spec"),
        ({"games": -1}, "'games' must be a non-negative integer"),
        ({"format": 99}, "not a nard-rl checkpoint"),
    ],
)
def test_a_malformed_checkpoint_is_a_checkpoint_error_naming_the_file(
    tmp_path, changes: dict, match: str
) -> None:
    path, _ = _saved(tmp_path, "bad.pt", **changes)
    with pytest.raises(CheckpointError, match=match) as info:
        load_network(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_declared_sizes_are_checked_before_anything_is_allocated(tmp_path) -> None:
    """A spec may declare any size; the loader bounds it and compares it with the stored
    weights' shapes on the meta device, so neither a 10^12-wide layer nor two 60,000-wide
    ones (14 GB) is ever allocated."""
    spec = _spec()
    huge, _ = _saved(tmp_path, "huge.pt", spec={**spec.to_dict(), "hidden": [10**12]})
    with pytest.raises(CheckpointError, match=r"hidden must be an integer in 1\.\.65,536"):
        load_network(huge)
    wide = {**spec.to_dict(), "hidden": [60_000, 60_000]}
    mismatch, _ = _saved(tmp_path, "wide.pt", spec=wide)
    with pytest.raises(CheckpointError, match=r"do not fit .* body\.0\.weight"):
        load_network(mismatch)
    inputs, _ = _saved(tmp_path, "inputs.pt", spec={**spec.to_dict(), "inputs": 7})
    with pytest.raises(CheckpointError, match="declares 7 inputs"):
        load_network(inputs)
    odd, _ = _saved(tmp_path, "odd.pt", spec={**spec.to_dict(), "hidden": [True]})
    with pytest.raises(CheckpointError, match="hidden must be an integer"):
        load_network(odd)


def test_weights_that_do_not_fit_the_spec_are_named(tmp_path) -> None:
    spec = _spec()
    _, ckpt = _saved(tmp_path, "x.pt")
    model = dict(ckpt["model"])
    model["body.0.weight"] = model["body.0.weight"][:, :-1]
    del model["head.bias"]
    path, _ = _saved(tmp_path, "cut.pt", model={**model, "extra.weight": torch.zeros(1)})
    with pytest.raises(CheckpointError) as info:
        load_network(path)
    msg = str(info.value)
    assert "missing head.bias" in msg and "unexpected extra.weight" in msg
    assert f"body.0.weight (16, {spec.inputs - 1}) (spec: (16, {spec.inputs}))" in msg


@pytest.mark.parametrize("command", ["hint", "agent"])
@pytest.mark.parametrize("content", ["random", "pickled", "no-model"])
def test_commands_answer_a_bad_checkpoint_with_one_line(
    tmp_path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    content: str,
) -> None:
    import io
    import os

    from nard_rl.cli import main

    path = tmp_path / "bad.pt"
    if content == "random":
        path.write_bytes(os.urandom(4096))
    elif content == "pickled":
        torch.save({"x": _Evil(str(tmp_path / "ran"))}, path)
    else:
        path, _ = _saved(tmp_path, "bad.pt", model=None)
    if command == "hint":
        args = ["hint", "--dice", "3", "1", "--net", str(path)]
    else:
        monkeypatch.setattr("sys.stdin", io.StringIO('{"dice": [3, 1]}\n'))
        args = ["agent", "--player", str(path)]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse-style errors exit, the others return a status
        code = exc.code
    assert code not in (0, None)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"nard {command}: error: {path}"), err
    assert "Traceback" not in err[0] and not (tmp_path / "ran").exists()


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
    with pytest.raises(ValueError, match=r"garbage\.pt is not a (readable|nard-rl) checkpoint"):
        load_checkpoint(path)
    truncated, _ = _saved(tmp_path, "whole.pt")
    cut = tmp_path / "cut.pt"
    cut.write_bytes(truncated.read_bytes()[:2000])  # a save cut short
    with pytest.raises(CheckpointError, match=r"cut\.pt is not a (readable|nard-rl) checkpoint"):
        load_checkpoint(cut)
