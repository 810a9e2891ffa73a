"""Average the weights of several checkpoints of one run (stochastic weight averaging).

    python scripts/average_checkpoints.py OUT.pt runs/ship/checkpoints/games_0013*.pt ...

Late checkpoints of a TD run wander around one basin with the noise of the learning
rate; their mean is usually a little stronger than any one of them.  All inputs must
share one network spec; the output keeps the last input's counts and config and lists
its sources.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from nard_rl.nets.network import load_network, save_checkpoint


def average(paths: list[Path], out: Path) -> None:
    if not paths:
        raise SystemExit("give at least one checkpoint")
    nets = [load_network(p) for p in paths]
    spec = nets[0][1]
    for p, (_, s, _) in zip(paths, nets, strict=True):
        if s != spec:
            raise SystemExit(f"{p} has another network spec than {paths[0]}")
    net = spec.build()
    with torch.no_grad():
        state = {
            k: torch.stack([n.state_dict()[k].float() for n, _, _ in nets]).mean(0)
            for k in nets[0][0].state_dict()
        }
    net.load_state_dict(state)
    last = max(nets, key=lambda t: t[2]["games"])[2]
    extra: dict[str, object] = {"averaged": [p.name for p in paths]}
    if "history" in last.get("extra", {}):
        extra["history"] = last["extra"]["history"]
    save_checkpoint(
        out, net, spec, games=last["games"], step=last["step"], config=last["config"], extra=extra
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("inputs", type=Path, nargs="+")
    args = ap.parse_args()
    average(args.inputs, args.out)
    print(f"wrote {args.out} from {len(args.inputs)} checkpoints")


if __name__ == "__main__":
    main()
