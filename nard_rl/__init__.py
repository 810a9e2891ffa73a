"""nard-rl: a Nard (backgammon) engine, Gymnasium environments and self-play training.

Importing the package registers the Gymnasium ids ``Nard-v0``, ``NardSelfPlay-v0`` and
``NardCube-v0`` (see the top-level ``envs`` package), so ``gymnasium.make("Nard-v0")``
works after a plain ``import nard_rl``.
"""

import envs as _envs  # noqa: F401  (registers the Gymnasium environments)
