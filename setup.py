"""Package discovery that ``pyproject.toml`` alone cannot express.

Every package under ``nard_rl/`` (any folder with an ``__init__.py``) is found, so a new
subpackage ships without an edit here.  Three top-level folders install inside
``nard_rl`` under other names, per ``[tool.setuptools.package-dir]`` in ``pyproject.toml``
(``envs/`` as ``nard_rl.envs``, ``checkpoints/`` as ``nard_rl.checkpoints``, ``configs/``
as ``nard_rl.conf``); setuptools' ``find`` directive cannot combine found packages with
mapped ones, hence this file.  Everything else, data patterns included, is in
``pyproject.toml``.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def packages() -> list[str]:
    pyproject = tomllib.loads((HERE / "pyproject.toml").read_text())
    mapped: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]
    found = find_packages(where=HERE, include=["nard_rl", "nard_rl.*"])
    for name, folder in mapped.items():  # and any subpackage a mapped folder grows
        found += [name] + [f"{name}.{sub}" for sub in find_packages(where=HERE / folder)]
    return sorted(set(found))


setup(packages=packages())
