"""nard-rl: a Nard (backgammon) engine, Gymnasium environments and self-play training.

The Gymnasium ids ``Nard-v0``, ``NardSelfPlay-v0`` and ``NardCube-v0`` live in
``nard_rl.envs``.  ``import nard_rl`` registers them without importing Gymnasium itself
(the engine must load without it): if Gymnasium is already imported they are registered
now, otherwise right after its import finishes, so ``import nard_rl`` followed by
``gymnasium.make("Nard-v0")`` works in either order.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType


def _register() -> None:
    import nard_rl.envs  # noqa: F401  (registers the ids on import)


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps Gymnasium's own loader so the ids are registered the
    moment its import completes (a post-import hook; removed after first use)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            sys.modules[fullname] = module  # _register imports it back
            _register()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if "gymnasium" in sys.modules:
    _register()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
