"""Gymnasium environments for Nard, installed as ``nard_rl.envs`` (from the top-level
``envs/`` folder, as ``configs/`` and ``checkpoints/`` install under ``nard_rl``).

Importing this package registers the ids, as Gymnasium 1.x packages do:
``gymnasium.register_envs(nard_rl.envs)`` (which only names the import, so linters keep
it) and then ``gymnasium.make("Nard-v0")``; or ``gymnasium.make("nard_rl.envs:Nard-v0")``,
which imports this package itself, in a fresh interpreter.  Nothing else registers them:
no import hook, so ``import gymnasium`` never depends on this package being installed.
The environment modules load only when an environment is made.

* ``Nard-v0``: the agent against an opponent player (``opponent="random"`` by default);
* ``NardSelfPlay-v0``: the same environment with ``opponent="self"``;
* ``NardCube-v0``: one game with the doubling cube (``nard_rl.envs.cube_env.NardCubeEnv``,
  also ``gymnasium.make("Nard-v0", cube=True)``), same spaces, cube decisions as extra
  steps.

The cubeless ids have a vector entry point, so ``gymnasium.make_vec("NardSelfPlay-v0",
num_envs=N)`` builds ``nard_rl.envs.vector.NardVectorEnv`` (flat batched candidates,
same-step autoreset); the cube variant has none.
"""

from __future__ import annotations

ENV_IDS: dict[str, dict[str, object]] = {
    "Nard-v0": {"opponent": "random"},
    "NardSelfPlay-v0": {"opponent": "self"},
    "NardCube-v0": {"opponent": "random", "cube": True},
}
"""Registered ids and the keyword arguments they fix."""


def register_envs() -> None:
    """Register every id in ``ENV_IDS`` with Gymnasium (once; later calls do nothing)."""
    import gymnasium

    for env_id, kwargs in ENV_IDS.items():
        if env_id in gymnasium.registry:
            continue
        if kwargs.get("cube"):
            gymnasium.register(
                id=env_id, entry_point="nard_rl.envs.cube_env:NardCubeEnv", kwargs=dict(kwargs)
            )
            continue
        gymnasium.register(
            id=env_id,
            entry_point="nard_rl.envs.nard_env:NardEnv",
            vector_entry_point="nard_rl.envs.vector:NardVectorEnv",
            kwargs=dict(kwargs),
        )


register_envs()
