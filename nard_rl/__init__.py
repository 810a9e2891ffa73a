"""nard-rl: a Nard (backgammon) engine, Gymnasium environments and self-play training.

Importing ``nard_rl`` loads nothing heavy and never touches Gymnasium (the engine must
load without it).  The Gymnasium ids ``Nard-v0``, ``NardSelfPlay-v0`` and
``NardCube-v0`` are registered by ``import nard_rl.envs``, as Gymnasium 1.x packages do:
``gymnasium.register_envs(nard_rl.envs)`` then ``gymnasium.make("Nard-v0")``, or
``gymnasium.make("nard_rl.envs:Nard-v0")`` with no import at all.
"""
