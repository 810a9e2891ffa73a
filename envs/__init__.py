"""Gymnasium environments for Nard: ``Nard-v0``, ``NardSelfPlay-v0`` and their vector form.

Importing this package (or ``nard_rl``, which calls ``register_envs``) registers the ids;
the environment modules themselves load only when an environment is made, so the
registration costs nothing but Gymnasium's import.

* ``Nard-v0``: the agent against an opponent player (``opponent="random"`` by default);
* ``NardSelfPlay-v0``: the same environment with ``opponent="self"``;
* ``NardCube-v0``: one game with the doubling cube (``envs.cube_env.NardCubeEnv``, also
  ``gymnasium.make("Nard-v0", cube=True)``), same spaces, cube decisions as extra steps.

The cubeless ids have a vector entry point, so ``gymnasium.make_vec("NardSelfPlay-v0",
num_envs=N)`` builds ``envs.vector.NardVectorEnv`` (flat batched candidates, same-step
autoreset); the cube variant has none.
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
                id=env_id, entry_point="envs.cube_env:NardCubeEnv", kwargs=dict(kwargs)
            )
            continue
        gymnasium.register(
            id=env_id,
            entry_point="envs.nard_env:NardEnv",
            vector_entry_point="envs.vector:NardVectorEnv",
            kwargs=dict(kwargs),
        )


register_envs()
