"""The labelled-position dataset that outlives runs: every label shard a generation makes is
kept here, compactly and with its provenance, so the next run fits on all of it instead of
labelling again.

Layout (``ROOT``, by default ``datasets/`` of the checkout; the repository commits it)::

    datasets/
      CARD.md                         counts, provenance and budget, written by ``write_card``
      <rules>/<source>/SOURCE.json    who labelled these rows, and how
      <rules>/<source>/part_NNNNN.npz one label shard, compact

A *source* is one labelling job: one teacher (its checkpoint's SHA-256, and whether the
race net answered races), one method and depth (``ply2``, ``rollout``, ...), one seed and
generation, so its positions are a pure function of what ``SOURCE.json`` records and are
never labelled twice (``deposit`` refuses a second source with the same positions).  A
part stores the board as 26 int8, the label as probabilities in steps of 1/4080 (2.5e-4,
a hundredth of a 2-ply label's own error) and the teacher's 0-ply view in steps of 1/255
(it is kept for provenance and statistics; fitting never reads it), the decision id, the
0-ply rank and the disagreement flag: about 15 bytes a row (``FORMAT``).

Relabelling policy.  ``load_dataset`` answers every board once: where several sources
labelled the same afterstate, the row of the deepest method wins, then the newest teacher
(the later ``created``); so a relabelled source (the same boards labelled again by a better
teacher, kept as a source of its own: ``relabel``, ``nard dataset relabel``, a search over a
source's stored boards, with no collection) replaces their labels.  Old rows are worth
relabelling when their teacher is two or more accepted generations behind the current one
at the same depth (its labels then carry errors the current net no longer makes); until
then new positions buy more per CPU-hour than relabelled ones, because collection is free
next to the search.

Retirement.  A part whose boards a relabel holds again, at the same or more depth and by a
later teacher, can no longer win a board, so it only costs budget: ``retire`` (``nard
dataset retire``; ``relabel`` does it part by part as it goes) deletes it from the working
tree and lists it in the source's ``RETIRED.json`` (part, rows, superseding source, date).
The source's ``SOURCE.json`` stays, so its seed stays used, and the retired rows stay in
the repository's history (``git log --diff-filter=D -- datasets/``), so nothing labelled
is lost; only the superseded copy leaves the budget.
"""

from __future__ import annotations

import itertools
import json
import lzma
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nard_rl.training.supervised.label import SHARD_FIELDS, read_shard
from nard_rl.util.io import atomic_write

FORMAT = 3
"""Version of the part format, bumped when a field or its coding changes.  1: the columns
as ``np.savez_compressed`` arrays (about 27 bytes a row).  2: one xz stream of the columns
laid out column by column and byte plane by byte plane, with the label stored as its
difference from the teacher's 0-ply view and the decision ids as steps (about 21 bytes a
row: neighbouring rows are afterstates of one position, so each plane is long runs of
near-equal bytes).  3: format 2's stream with the label in steps of 1/4080 and the 0-ply
view in steps of 1/255 instead of both in 1/65535 (about 15 bytes a row, 29% less: the
low bits of a label were noise that xz had to keep; a label moves by at most 1.2e-4, its
cubeless equity by at most 7e-4 and by 2e-4 RMS, where a 2-ply label is some 2e-2 from
the truth).  Parts of every format in ``READABLE_FORMATS`` are read; new parts are
written in the latest, and ``compact`` rewrites older ones."""
READABLE_FORMATS = (1, 2, 3)
STEPS = {1: (65535, 65535), 2: (65535, 65535), 3: (4080, 255)}
"""Per format, the number of steps of [0, 1] of the label and of the 0-ply view.  The
label's count is a multiple of the view's, so the view scaled up predicts the label
exactly in integers and the residual the stream keeps is small."""
ROOT = Path("datasets")
"""Where ``nard pipeline`` and ``nard dataset`` look by default (relative to the working
directory: the repository root when run from a checkout)."""
BUDGET_MB = 46.0
"""The total size the committed dataset may reach; ``deposit`` refuses to pass it.  At
about 15 bytes a row (format 3) that is some 3 million rows; the bound keeps a checkout
small enough to travel whole to an accelerator machine (64 MiB with the nets, the code, the
validation sets and the burst's wheels; ``scripts/gpu_wheels.sh`` checks it)."""
METHOD_DEPTH = {"ply0": 0, "ply1": 1, "ply2": 2, "ply3": 3, "rollout": 4, "outcome": 0}
"""How strong a label method is, for choosing between two labels of one board."""


@dataclass(frozen=True)
class Source:
    """One labelling job's provenance (the contents of ``SOURCE.json``)."""

    name: str
    rules: str
    teacher: str
    teacher_sha256: str
    race_net: bool
    method: str
    seed: int
    generation: int
    label: dict[str, Any]
    created: str

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **self.__dict__}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Source:
        fields = {k: d[k] for k in cls.__dataclass_fields__}
        return cls(**fields)


def teacher_digest(path: str | Path) -> str:
    """SHA-256 of a checkpoint's weights (``training.distributed.weights_digest``), so a copy
    of a net with another history (a run's ``best.pt`` of the shipped net) is the same
    teacher."""
    from nard_rl.nets.network import load_network
    from nard_rl.training.distributed import weights_digest

    net, _, _ = load_network(path)
    return weights_digest(net)


def method_name(label: dict[str, Any]) -> str:
    """``ply2``, ``rollout``, ...: the label config's method and depth in one word."""
    return "rollout" if label.get("method") == "rollout" else f"ply{int(label.get('ply', 1))}"


def source_name(teacher: str, method: str, race_net: bool, seed: int, generation: int) -> str:
    """A readable, unique folder name, e.g. ``gen6+race-ply2-s8-g1``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in teacher)[:40]
    return f"{safe}{'+race' if race_net else ''}-{method}-s{seed}-g{generation}"


def _quantise(p: np.ndarray, steps: int) -> np.ndarray:
    return np.round(np.clip(p, 0.0, 1.0) * steps).astype(np.uint16)


def _dequantise(q: np.ndarray, steps: int) -> np.ndarray:
    return (q.astype(np.float32) / np.float32(steps)).astype(np.float32)


def _sources(root: Path, rules: str | None = None) -> list[tuple[Path, Source]]:
    out = []
    for meta in sorted(root.glob("*/*/SOURCE.json")):
        src = Source.from_dict(json.loads(meta.read_text()))
        if rules is None or src.rules == rules:
            out.append((meta.parent, src))
    return out


def size_mb(root: str | Path) -> float:
    root = Path(root)
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


def deposit(
    shards: Iterable[str | Path],
    root: str | Path,
    *,
    teacher: str,
    teacher_path: str | Path,
    budget_mb: float = BUDGET_MB,
) -> Path:
    """Copy label shards (one labelling job's, ``nard_rl.training.supervised.label``) into the
    dataset as one source; idempotent (parts already there are kept; the same job kept
    under another teacher name, the same net by content, joins that source) and
    refusing a second source with the same positions or a dataset past its budget.
    Returns the source's folder."""
    paths = sorted(Path(p) for p in shards)
    if not paths:
        raise ValueError("no label shards to deposit")
    root = Path(root)
    first_meta = read_shard(paths[0])[1]
    label = dict(first_meta["label"])
    rules = str(first_meta.get("rules", "standard"))
    race = bool(label.get("race_net", False))
    method = method_name(label)
    digest = teacher_digest(teacher_path)
    _check_teacher(paths[0], first_meta, teacher, digest)
    seed_seq = first_meta["seed"]
    seed, generation = int(seed_seq[0]), int(first_meta["generation"])
    src = Source(
        name=source_name(teacher, method, race, seed, generation),
        rules=rules,
        teacher=teacher,
        teacher_sha256=digest,
        race_net=race,
        method=method,
        seed=seed,
        generation=generation,
        label=label,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    folder = root / rules / src.name
    meta_path = folder / "SOURCE.json"
    if meta_path.exists():
        old = Source.from_dict(json.loads(meta_path.read_text()))
        if old.teacher_sha256 != src.teacher_sha256 or old.label != src.label:
            raise ValueError(
                f"{folder} already holds a source of that name from another teacher or "
                "label config; deposit under another teacher name"
            )
        src = old
    else:
        for other_dir, other in _sources(root, rules):
            # the same positions labelled the same way again (another method over the
            # same positions is a relabel, which the policy allows)
            same_positions = (
                other.method == method
                and other.seed == seed
                and other.generation == generation
                and other.teacher_sha256 == src.teacher_sha256
                and other.label.get("decisions_per_shard") == label.get("decisions_per_shard")
            )
            if same_positions and other.label == label:
                # the same job kept under another teacher name (a renamed copy of the
                # same net): its parts are these, so it joins that source
                folder, meta_path, src = other_dir, other_dir / "SOURCE.json", other
                break
            if same_positions:
                raise ValueError(
                    f"{other_dir} already holds the positions of seed {seed}, generation "
                    f"{generation} from this teacher, labelled by {method}: choose another "
                    "pipeline seed"
                )
    budget_checked = False
    for path in paths:
        data, meta = read_shard(path)
        if meta["label"] != label or int(meta["generation"]) != generation:
            raise ValueError(f"{path} belongs to another labelling job than {paths[0]}")
        _check_teacher(path, meta, teacher, src.teacher_sha256)
        part = folder / f"part_{int(meta['shard']):05d}.npz"
        if part.exists():
            continue
        # judged before the first new part only: depositing again what is already kept
        # (a later stage of the same run) adds nothing, so a full budget must not stop it
        if not budget_checked and root.exists() and size_mb(root) > budget_mb:
            raise ValueError(
                f"{root} is {size_mb(root):.1f} MB, past its {budget_mb:.0f} MB budget: "
                "relabel or prune before adding rows (see the module doc)"
            )
        budget_checked = True
        _write_part(part, data, {"format": FORMAT, "source": src.name, **meta})
    if not meta_path.exists():
        atomic_write(meta_path, lambda fh: fh.write(json.dumps(src.to_dict(), indent=2).encode()))
    return folder


def _check_teacher(path: Path, meta: dict[str, Any], teacher: str, digest: str) -> None:
    """A shard that records its teacher (``label.teacher_identity``) is kept only under
    that teacher: the labels' provenance is the dataset's first promise.  Shards from
    before teachers were recorded are taken on the caller's word."""
    recorded = meta.get("teacher")
    if recorded is not None and recorded != digest:
        raise ValueError(
            f"{path} was labelled by the net with weights {recorded[:12]}, not by {teacher} "
            f"({digest[:12]}): deposit it under the teacher that labelled it"
        )


def _planes(a: np.ndarray) -> bytes:
    """An ``(n, k)`` (or ``(n,)``) array's bytes column by column, each column's bytes by
    byte plane (all low bytes, then all high bytes), which xz packs far tighter than rows."""
    a = np.asarray(a)
    cols = np.ascontiguousarray(a.reshape(a.shape[0], 1 if a.ndim == 1 else a.shape[1]).T)
    k, n, size = cols.shape[0], cols.shape[1], cols.dtype.itemsize
    return np.ascontiguousarray(
        cols.view(np.uint8).reshape(k, n, size).transpose(0, 2, 1)
    ).tobytes()


def _unplanes(buf: bytes, offset: int, n: int, dtype: type, k: int) -> tuple[np.ndarray, int]:
    """The inverse of ``_planes`` for the ``(n, k)`` array at ``offset``; returns it and the
    offset after it."""
    size = np.dtype(dtype).itemsize
    length = n * k * size
    if offset + length > len(buf):
        raise ValueError("truncated")
    raw = np.frombuffer(buf, np.uint8, length, offset).reshape(k, size, n).transpose(0, 2, 1)
    return np.ascontiguousarray(raw).view(dtype).reshape(k, n).T.copy(), offset + length


def _view_to_label(fmt: int) -> np.uint16:
    """The factor that carries a 0-ply view's steps to its label's (``STEPS``)."""
    return np.uint16(STEPS[fmt][0] // STEPS[fmt][1])


def _pack(compact: dict[str, np.ndarray], fmt: int = FORMAT) -> bytes:
    """Format 2's or 3's xz stream (see ``FORMAT``) of quantised columns; ``_unpack``
    inverts it exactly."""
    # uint16 arithmetic wraps: an exact inverse whatever the sign of the residual
    residual = compact["probs"] - compact["probs0"] * _view_to_label(fmt)
    steps = np.diff(compact["decision"].astype(np.int64), prepend=0).astype(np.int32)
    blob = b"".join(
        (
            _planes(compact["boards"]),
            _planes(compact["probs0"]),
            _planes(residual),
            _planes(steps),
            _planes(compact["rank0"]),
            np.packbits(compact["disagree"]).tobytes(),
        )
    )
    return lzma.compress(blob, format=lzma.FORMAT_XZ, preset=6)


def _unpack(packed: bytes, n: int, fmt: int = FORMAT) -> dict[str, np.ndarray]:
    blob = lzma.decompress(packed, format=lzma.FORMAT_XZ)  # xz checks its CRC64
    boards, at = _unplanes(blob, 0, n, np.int8, 26)
    probs0, at = _unplanes(blob, at, n, np.uint16, 5)
    residual, at = _unplanes(blob, at, n, np.uint16, 5)
    steps, at = _unplanes(blob, at, n, np.int32, 1)
    rank0, at = _unplanes(blob, at, n, np.int8, 1)
    flags = np.frombuffer(blob, np.uint8, len(blob) - at, at)
    if flags.size != (n + 7) // 8:
        raise ValueError(f"{len(blob)} bytes do not hold {n} rows")
    return {
        "boards": boards,
        "probs": probs0 * _view_to_label(fmt) + residual,
        "probs0": probs0,
        "decision": np.cumsum(steps.ravel().astype(np.int64)),
        "rank0": rank0.ravel(),
        "disagree": np.unpackbits(flags, count=n).astype(bool),
    }


def _write_part(path: Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """One part in the latest format (``FORMAT``), written atomically."""
    compact = {
        "boards": np.asarray(data["boards"], dtype=np.int8).reshape(-1, 26),
        "probs": _quantise(np.asarray(data["probs"]), STEPS[FORMAT][0]).reshape(-1, 5),
        "probs0": _quantise(np.asarray(data["probs0"]), STEPS[FORMAT][1]).reshape(-1, 5),
        "decision": np.asarray(data["decision"]).astype(np.int32),
        "rank0": np.asarray(data["rank0"]).astype(np.int8),
        "disagree": np.asarray(data["disagree"]).astype(bool),
    }
    n = compact["boards"].shape[0]
    if any(v.shape[0] != n for v in compact.values()):
        raise ValueError(f"{path}: columns of unequal length {[v.shape for v in compact.values()]}")
    text = json.dumps({**meta, "format": FORMAT, "rows": n})
    blob = _pack(compact)
    # the codec is checked on every part it writes: a row it could not give back is never
    # the only copy on disk
    again = _unpack(blob, n)
    if not all(np.array_equal(again[k], v) for k, v in compact.items()):
        raise ValueError(f"{path}: the part does not read back equal; nothing written")
    packed = np.frombuffer(blob, dtype=np.uint8)
    atomic_write(path, lambda fh: np.savez_compressed(fh, meta=text, packed=packed))


def _part_meta(path: Path) -> dict[str, Any]:
    """A part's metadata (the labelling job's, plus ``format`` and, from format 2, ``rows``)."""
    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["meta"]))


def _read_part(path: Path) -> dict[str, np.ndarray]:
    """A part's rows, whatever its format in ``READABLE_FORMATS``."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        fmt = int(meta.get("format", 0))
        if fmt not in READABLE_FORMATS:
            raise ValueError(
                f"{path}: dataset part format {meta.get('format')}, not one of {READABLE_FORMATS}"
            )
        if fmt == 1:
            q = {k: z[k] for k in ("boards", "probs", "probs0", "decision", "rank0", "disagree")}
        else:
            try:
                q = _unpack(z["packed"].tobytes(), int(meta["rows"]), fmt)
            except (lzma.LZMAError, ValueError, KeyError) as exc:
                raise ValueError(f"{path}: damaged dataset part ({exc})") from exc
    return {
        "boards": q["boards"].astype(np.int8),
        "probs": _dequantise(q["probs"], STEPS[fmt][0]),
        "probs0": _dequantise(q["probs0"], STEPS[fmt][1]),
        "decision": q["decision"].astype(np.int64),
        "rank0": q["rank0"].astype(np.int8),
        "disagree": q["disagree"].astype(bool),
    }


def compact(root: str | Path, *, progress: bool = False) -> tuple[int, float, float]:
    """Rewrite every part older than ``FORMAT`` in the latest format (atomically, part by
    part, so an interrupted run resumes and readers beside it see one or the other
    coding); returns ``(parts rewritten, MB before, MB after)``.  Boards, decisions, ranks
    and flags are unchanged and the label and 0-ply view are rounded to the latest
    format's steps (``STEPS``), nothing more: ``_write_part`` checks that each part reads
    back equal to what it quantised before it replaces the old file, and a part read and
    written again in its own format comes back bit for bit.  The earlier coding stays in
    the repository's history."""
    from nard_rl.util.progress import progress_bar

    root = Path(root)
    before = size_mb(root) if root.exists() else 0.0
    old = [
        p
        for p in sorted(root.glob("*/*/part_*.npz"))
        if int(_part_meta(p).get("format", 0)) < FORMAT
    ]
    bar = progress_bar(len(old), unit="part", desc="compact", disable=not progress)
    for path in old:
        _write_part(path, _read_part(path), _part_meta(path))
        bar.update(1)
    bar.close()
    return len(old), before, size_mb(root) if root.exists() else 0.0


def load_dataset(
    root: str | Path, rules: str, *, sources: Sequence[str] | None = None, first_id: int = 0
) -> dict[str, np.ndarray]:
    """Every row of the rule set's sources (or the named ones) in ``load_rows``'s format,
    each board once (the deepest, then newest, label wins; see the module doc).
    ``generation`` numbers the sources from ``first_id`` so held-out splits stay per source.

    Safe beside a running relabel (see ``_read_ranked``): every board is read once at
    least, whichever of its old and new parts exists at the moment it is looked for.
    """
    root = Path(root)

    def ranked() -> list[Path]:
        picked = [(d, s) for d, s in _sources(root, rules) if sources is None or s.name in sources]
        if sources is not None:
            missing = set(sources) - {s.name for _, s in picked}
            if missing:
                raise FileNotFoundError(f"no such dataset sources under {root}: {sorted(missing)}")
        # the strongest source first, so the first occurrence of a board is the one kept
        picked.sort(key=lambda ds: ds[1].created, reverse=True)
        picked.sort(key=lambda ds: -METHOD_DEPTH.get(ds[1].method, 0))
        return [folder for folder, _ in picked]

    parts = _read_ranked(ranked, first_id)
    keys = (*SHARD_FIELDS, "generation")
    if not parts:
        return {
            k: np.zeros((0, 26), np.int8) if k == "boards" else np.zeros(0, np.int64) for k in keys
        }
    rows = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    _, first = np.unique(rows["boards"], axis=0, return_index=True)
    keep = np.sort(first)
    return {k: v[keep] for k, v in rows.items()}


def _read_ranked(
    ranked: Callable[[], list[Path]], first_id: int, attempts: int = 20
) -> list[dict[str, np.ndarray]]:
    """The parts of the sources ``ranked()`` lists (strongest first), in that order, read
    so that a relabel running beside the reader loses it no board.

    A relabel writes part N of its new source (atomically) and only then deletes part N of
    the source it supersedes, and the new source always ranks above the old one.  So the
    sources are read weakest first, each folder listed just before it is read: a part gone
    from an old folder (before the listing, or between the listing and the read) was
    retired after its twin was written, and the stronger folder, listed later, holds it.
    Only a relabel that *starts* during the read, whose new source the first listing did
    not know, can take boards away; then the sources are listed and read again."""
    for _ in range(attempts):
        folders = ranked()
        parts: list[list[dict[str, np.ndarray]]] = []
        for g in reversed(range(len(folders))):
            mine: list[dict[str, np.ndarray]] = []
            for path in sorted(folders[g].glob("part_*.npz")):
                try:
                    data = _read_part(path)
                except FileNotFoundError:
                    continue  # retired while we read; a stronger source read later holds it
                data["generation"] = np.full(data["boards"].shape[0], first_id + g, np.int64)
                mine.append(data)
            parts.append(mine)
        if ranked() == folders:
            return [p for mine in reversed(parts) for p in mine]
    raise RuntimeError(
        f"new dataset sources kept appearing while it was read ({attempts} tries): "
        "read it once the jobs writing to it have started"
    )


def merge_rows(*parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rows of several ``load_rows``/``load_dataset`` results, each board once (the first
    part's row wins)."""
    nonempty = [p for p in parts if p["boards"].shape[0]]
    if not nonempty:
        return parts[0]
    keys = (*SHARD_FIELDS, "generation")
    rows = {k: np.concatenate([p[k] for p in nonempty]) for k in keys}
    _, first = np.unique(rows["boards"], axis=0, return_index=True)
    keep = np.sort(first)
    return {k: v[keep] for k, v in rows.items()}


def relabel(
    root: str | Path,
    source: str,
    evaluator: Any,
    *,
    teacher: str,
    teacher_path: str | Path,
    ply: int = 2,
    prune: bool = True,
    chunk: int = 256,
    progress: bool = False,
    retire_old: bool = True,
) -> Path:
    """Label the boards of an existing source again with ``evaluator``'s ``ply`` search and
    keep them as a source of their own; idempotent per part, so an interrupted relabel
    resumes.  Each old part is retired as soon as its relabel is written (``retire_old``),
    so the dataset's size stays put.  Each decision's disagreement flag is judged afresh
    from the new labels (against the old teacher's 0-ply ranks, which the part keeps)."""
    from nard_rl.engine.batch import segment_argmax
    from nard_rl.engine.rules import cubeless_equity
    from nard_rl.search.nply import Search
    from nard_rl.util.progress import progress_bar

    root = Path(root)
    found = [(d, s) for d, s in _sources(root) if s.name == source]
    if not found:
        raise FileNotFoundError(f"no dataset source {source!r} under {root}")
    old_dir, old = found[0]
    if old.rules != evaluator.rules.name:
        raise ValueError(f"{source} is {old.rules} rules; the teacher plays {evaluator.rules.name}")
    label = {**old.label, "method": "ply", "ply": int(ply), "prune": bool(prune)}
    label["relabel_of"] = old.name
    race = getattr(evaluator, "race", None) is not None
    method = method_name(label)
    src = Source(
        name=source_name(teacher, method, race, old.seed, old.generation) + "-relabel",
        rules=old.rules,
        teacher=teacher,
        teacher_sha256=teacher_digest(teacher_path),
        race_net=race,
        method=method,
        seed=old.seed,
        generation=old.generation,
        label=label,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    folder = root / old.rules / src.name
    if (folder / "SOURCE.json").exists():
        prev = Source.from_dict(json.loads((folder / "SOURCE.json").read_text()))
        if prev.teacher_sha256 != src.teacher_sha256 or prev.label != src.label:
            raise ValueError(f"{folder} holds a relabel by another teacher or method")
        src = prev
    if old.teacher_sha256 == src.teacher_sha256 and old.method == method:
        raise ValueError(f"{source} is already labelled by this teacher at {method}")
    if not (folder / "SOURCE.json").exists():
        # first, so a part retired below is never left without the source that supersedes it
        atomic_write(
            folder / "SOURCE.json",
            lambda fh: fh.write(json.dumps(src.to_dict(), indent=2).encode()),
        )
    search = Search(evaluator, pruner=None if prune else False)
    parts = sorted(old_dir.glob("part_*.npz"))
    bar = progress_bar(len(parts), unit="part", desc=f"relabel {source}", disable=not progress)
    for path in parts:
        target = folder / path.name
        if target.exists():
            if retire_old:
                _retire_part(old_dir, old, path, folder, src)
            bar.update(1)
            continue
        data = _read_part(path)
        boards = data["boards"]
        probs = (
            np.concatenate(
                [
                    search.afterstate_probs(boards[lo : lo + chunk], ply=int(ply))
                    for lo in range(0, boards.shape[0], chunk)
                ]
            )
            if boards.shape[0]
            else np.zeros((0, 5), np.float32)
        )
        dec = data["decision"]
        starts = np.flatnonzero(np.r_[True, dec[1:] != dec[:-1]]) if dec.size else dec
        seg = np.r_[starts, dec.size].astype(np.int64)
        best = segment_argmax(cubeless_equity(probs, evaluator.rules), seg)
        first0 = np.array([np.argmin(data["rank0"][a:b]) for a, b in itertools.pairwise(seg)])
        disagree = np.repeat(best != first0, np.diff(seg))
        pmeta = _part_meta(path)
        _write_part(
            target,
            {**data, "probs": probs, "disagree": disagree},
            {**pmeta, "source": src.name, "label": label},
        )
        if retire_old:
            _retire_part(old_dir, old, path, folder, src)
        bar.update(1)
    bar.close()
    return folder


def _supersedes(new: Source, old: Source) -> bool:
    """Whether ``new``'s label of a board always wins over ``old``'s in ``load_dataset``
    and comes from a later teacher at no less depth (what makes ``old`` safe to retire)."""
    return (
        new.label.get("relabel_of") == old.name
        and new.rules == old.rules
        and new.created >= old.created
        and METHOD_DEPTH.get(new.method, 0) >= METHOD_DEPTH.get(old.method, 0)
    )


def _retire_part(old_dir: Path, old: Source, part: Path, new_dir: Path, new: Source) -> bool:
    """Delete ``part`` of ``old`` when ``new`` holds the same boards, recording it in
    ``RETIRED.json``; ``False`` (and nothing touched) when ``new`` does not supersede it."""
    twin = new_dir / part.name
    if not (part.exists() and twin.exists() and _supersedes(new, old)):
        return False
    a, b = _read_part(part), _read_part(twin)
    if not np.array_equal(a["boards"], b["boards"]):
        return False
    rows, decisions = int(a["boards"].shape[0]), int(np.unique(a["decision"]).size)
    log_path = old_dir / "RETIRED.json"
    log = json.loads(log_path.read_text()) if log_path.exists() else []
    if part.name not in {e["part"] for e in log}:
        log.append(
            {
                "part": part.name,
                "rows": rows,
                "decisions": decisions,
                "superseded_by": new.name,
                "retired": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        text = json.dumps(sorted(log, key=lambda e: e["part"]), indent=2)
        atomic_write(log_path, lambda fh: fh.write(text.encode()))
    part.unlink()
    return True


def retire(root: str | Path, source: str | None = None) -> list[Path]:
    """Retire every part (of ``source``, or of any source) that a relabel supersedes (see
    the module doc); returns the parts deleted.  Idempotent."""
    root = Path(root)
    found = _sources(root)
    if source is not None and source not in {s.name for _, s in found}:
        raise FileNotFoundError(f"no dataset source {source!r} under {root}")
    gone = []
    for old_dir, old in found:
        if source is not None and old.name != source:
            continue
        for new_dir, new in found:
            if not _supersedes(new, old):
                continue
            for part in sorted(old_dir.glob("part_*.npz")):
                if _retire_part(old_dir, old, part, new_dir, new):
                    gone.append(part)
    return gone


def retired(folder: Path) -> list[dict[str, Any]]:
    """A source folder's ``RETIRED.json`` entries (empty when nothing was retired)."""
    path = folder / "RETIRED.json"
    return json.loads(path.read_text()) if path.exists() else []


def summary(root: str | Path) -> list[dict[str, Any]]:
    """Per source: its provenance and counts (rows, decisions, disagreements, bytes)."""
    out = []
    for folder, src in _sources(Path(root)):
        rows = decisions = disagree = 0
        for path in sorted(folder.glob("part_*.npz")):
            z = _read_part(path)
            rows += int(z["boards"].shape[0])
            decisions += int(np.unique(z["decision"]).size)
            disagree += int(np.unique(z["decision"][z["disagree"]]).size)
        gone = retired(folder)
        out.append(
            {
                **src.to_dict(),
                "retired_parts": len(gone),
                "retired_rows": sum(int(e["rows"]) for e in gone),
                "retired_decisions": sum(int(e["decisions"]) for e in gone),
                "parts": len(list(folder.glob("part_*.npz"))),
                "rows": rows,
                "decisions": decisions,
                "disagree_decisions": disagree,
                "mb": size_mb(folder),
            }
        )
    return out


def write_card(root: str | Path, budget_mb: float = BUDGET_MB) -> Path:
    """``CARD.md``: what the dataset holds, who labelled it, and how much room is left."""
    root = Path(root)
    rows = summary(root)
    lines = [
        "# Labelled positions",
        "",
        "Written by `nard dataset card` from the sources' `SOURCE.json` and parts; do not edit.",
        "Every row is our own search's or rollout's label of a self-play afterstate (mover's",
        "view, five cumulative outcome probabilities); no outside program's evaluation is",
        "ever stored here. Policy for relabelling: `nard_rl/training/supervised/dataset.py`.",
        "",
        f"Format {FORMAT}; budget {budget_mb:.0f} MB; used {size_mb(root):.1f} MB.",
        "",
        "| rules | source | teacher | method | seed | gen | parts | decisions | rows "
        "| disagree | MB | created |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        share = r["disagree_decisions"] / max(1, r["decisions"])
        lines.append(
            f"| {r['rules']} | {r['name']} | {r['teacher']} ({r['teacher_sha256'][:12]}) "
            f"| {r['method']}{' +race' if r['race_net'] else ''} | {r['seed']} "
            f"| {r['generation']} | {r['parts']} | {r['decisions']:,} | {r['rows']:,} "
            f"| {share:.1%} | {r['mb']:.1f} | {r['created']} |"
        )
    total_rows = sum(r["rows"] for r in rows)
    total_dec = sum(r["decisions"] for r in rows)
    used = sorted({(r["rules"], r["seed"]) for r in rows})
    lines += ["", f"Total: {total_dec:,} decisions, {total_rows:,} rows.", ""]
    gone = [r for r in rows if r["retired_parts"]]
    if gone:
        lines += [
            "Retired (superseded by a relabel of the same boards; the rows stay in the",
            "repository's history, listed in each source's `RETIRED.json`): "
            + "; ".join(
                f"{r['name']}: {r['retired_parts']} parts, {r['retired_decisions']:,} decisions"
                for r in gone
            )
            + ".",
            "",
        ]
    lines += [
        "Seeds already used (rules, seed): "
        + (", ".join(f"({a}, {b})" for a, b in used) or "none")
        + ".",
        "",
        "A new labelling job takes another seed, so it adds positions instead of repeating",
        "them.",
        "",
    ]
    path = root / "CARD.md"
    atomic_write(path, lambda fh: fh.write("\n".join(lines).encode()))
    return path
