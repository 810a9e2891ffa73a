"""Export a training checkpoint for shipping: weights, spec, config and counts, no optimiser.

    python scripts/export_checkpoint.py runs/ship/checkpoints/last.pt checkpoints/nard-default.pt

The optimiser state and RNG state only matter for resuming, and triple the size; the
exported file loads everywhere a checkpoint does (``weights_only=True``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nard_rl.nets.network import load_network, save_checkpoint


def export(src: Path, dst: Path, note: str | None = None) -> None:
    net, spec, ckpt = load_network(src)
    extra: dict[str, object] = {"exported_from": src.name}
    # every config the run was (re)started with, and the files a weight average was taken of
    for key in ("history", "averaged"):
        if key in ckpt.get("extra", {}):
            extra[key] = ckpt["extra"][key]
    if note:
        extra["note"] = note
    save_checkpoint(
        dst, net, spec, games=ckpt["games"], step=ckpt["step"], config=ckpt["config"], extra=extra
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    ap.add_argument("--note", help="free text stored with the checkpoint")
    args = ap.parse_args()
    export(args.src, args.dst, args.note)
    print(f"wrote {args.dst} ({args.dst.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
