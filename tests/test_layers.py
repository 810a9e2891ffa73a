"""The import contract of the package: which layer may import which.

The layers, lowest first; each is a folder of ``nard_rl/`` (a module imports only its own
layer and the ones below it):

0. foundation: the engine (``engine/``: rules, moves, positions, the batch stepper), the
   helpers every layer shares (``util/``: atomic writes, progress bars, run locks, sharded
   work) and packaged data.  The engine never imports torch or gymnasium, so the rules can
   be used, tested and compiled without either.
1. players: the player interface and spec, and the players that need no net (random,
   pubeval, GNU Backgammon).
2. nets (``nets/``): encodings, nets and their checkpoints, the pruning and race nets,
   evaluators.
3. lookahead (``search/``, ``cube/``): n-ply search, rollouts, the cube model, match
   equity and cubeful lookahead.  Cubeful rollouts and the cube's lookahead use each other.
4. play (``players/net.py``, ``arena/``): the net players, duplicate-dice matches, cubeful
   sessions, tournaments.
5. training (``training/``): TD self-play, distribution, the race net's training, the
   supervised pipeline and its dataset.
6. analysis and records (``analysis/``, ``records/``): game analysis, match files.
7. interfaces: the Gymnasium environments (``nard_rl.envs``) and the HTTP / UBGI server;
   siblings that never import each other.
8. commands: the CLI.

A new module must be placed here (the test fails until it is): where a module sits is a
design decision, not an accident of what it happens to import today.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INTERFACES = 7
"""The rank whose groups are siblings that may not import each other."""

LAYERS: dict[str, tuple[int, str]] = {
    # prefix: (rank, group); the longest matching prefix decides
    "nard_rl.engine": (0, "foundation"),
    "nard_rl.util": (0, "foundation"),
    "nard_rl.data": (0, "foundation"),
    "nard_rl.checkpoints": (0, "foundation"),
    "nard_rl.conf": (0, "foundation"),
    "nard_rl.players": (1, "players"),
    "nard_rl.nets": (2, "nets"),
    "nard_rl.search": (3, "lookahead"),
    "nard_rl.cube": (3, "lookahead"),
    "nard_rl.players.net": (4, "play"),
    "nard_rl.arena": (4, "play"),
    "nard_rl.training": (5, "training"),
    "nard_rl.analysis": (6, "analysis"),
    "nard_rl.records": (6, "analysis"),
    "nard_rl.envs": (INTERFACES, "envs"),
    "nard_rl.server": (INTERFACES, "server"),
    "nard_rl.commands": (8, "commands"),
    "nard_rl.cli": (8, "commands"),
    "nard_rl.__main__": (8, "commands"),
}

KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}
"""Imports against the contract that are known and owned; each must still exist (so a fix
removes its entry) and says where the code belongs."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "envs":  # installed as nard_rl.envs
        parts = ["nard_rl", "envs", *parts[1:]]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _source_files() -> list[Path]:
    files = sorted((ROOT / "nard_rl").rglob("*.py")) + sorted((ROOT / "envs").glob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]


def _layer(module: str) -> tuple[int, str] | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, layer)
    return None if best is None else best[1]


def _imports(path: Path) -> set[str]:
    """Every absolute import in the file, the lazy ones inside functions included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # ``from nard_rl import x`` names a submodule when x is one
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _internal(name: str) -> str | None:
    """The project module an import names (its deepest existing prefix), or None."""
    if not (name == "nard_rl" or name.startswith("nard_rl.")):
        return None
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in _MODULES:
            return candidate
        parts.pop()
    return None


_MODULES = {_module_name(f) for f in _source_files()}


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in _MODULES if m != "nard_rl" and _layer(m) is None)
    assert not unplaced, f"place these modules in LAYERS of tests/test_layers.py: {unplaced}"


def test_the_engine_names_neither_torch_nor_gymnasium() -> None:
    offenders = {}
    for path in _source_files():
        module = _module_name(path)
        if not module.startswith("nard_rl.engine"):
            continue
        heavy = sorted(
            name
            for name in _imports(path)
            if name.split(".")[0] in {"torch", "gymnasium", "gym", "pettingzoo"}
        )
        if heavy:
            offenders[module] = heavy
    assert not offenders, f"the engine imports heavy frameworks: {offenders}"


def test_no_module_imports_a_higher_layer() -> None:
    violations: dict[tuple[str, str], str] = {}
    for path in _source_files():
        module = _module_name(path)
        mine = _layer(module)
        if mine is None:
            continue
        for name in _imports(path):
            target = _internal(name)
            if target is None or target == "nard_rl" or target.startswith(module + "."):
                continue
            theirs = _layer(target)
            if theirs is None:
                continue
            higher = theirs[0] > mine[0]
            sibling = theirs[0] == mine[0] and theirs[1] != mine[1] and mine[0] == INTERFACES
            if higher or sibling:
                violations[(module, target)] = f"{mine[1]} -> {theirs[1]}"
    unknown = {k: v for k, v in violations.items() if k not in KNOWN_VIOLATIONS}
    assert not unknown, f"imports against the layers (module, imported): {unknown}"
    fixed = sorted(k for k in KNOWN_VIOLATIONS if k not in violations and _exists(k[0]))
    assert not fixed, f"fixed, so remove from KNOWN_VIOLATIONS: {fixed}"


def _exists(module: str) -> bool:
    return module in _MODULES


def _fresh_import(modules: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_whole_engine_loads_neither_torch_nor_gymnasium() -> None:
    engine = sorted(m for m in _MODULES if m.startswith("nard_rl.engine"))
    assert "nard_rl.engine.batch" in engine and "nard_rl.engine.rules" in engine
    loaded = _fresh_import(engine)
    assert set(engine) <= loaded
    heavy = sorted(m for m in loaded if m.split(".")[0] in {"torch", "gymnasium"})
    assert not heavy, f"importing the engine loaded {heavy[:10]}"


def test_lower_layers_load_no_commands_server_or_envs() -> None:
    """Importing every module below the interfaces (and so all they import, lazy imports
    aside) leaves the CLI, the server and the environments unloaded."""
    modules = sorted(
        m for m in _MODULES if (layer := _layer(m)) is not None and layer[0] < INTERFACES
    )
    loaded = _fresh_import(modules)
    assert set(modules) <= loaded
    upper = sorted(
        m
        for m in loaded
        if m.startswith(("nard_rl.commands", "nard_rl.server", "nard_rl.envs", "nard_rl.cli"))
    )
    assert not upper, f"the layers below the interfaces loaded {upper}"
