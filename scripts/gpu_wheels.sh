#!/usr/bin/env bash
# Wheels for a GPU machine that reaches no package registry: everything nard-rl needs
# beyond what such a machine's Python 3.12 already holds (CUDA PyTorch, numba, numpy,
# tensorboard, matplotlib), downloaded here into WHEELS (default .whl, ignored by git).
# scripts/gpu_label.sh installs them from there with --no-index.
#
#   scripts/gpu_wheels.sh            # then carry .whl along with the working tree
set -euo pipefail
WHEELS=${WHEELS:-.whl}
PY=${PY:-3.12}
mkdir -p "${WHEELS}"
# hydra's parser runtime is published as a source archive only: build its (pure Python)
# wheel here, then let the binary-only download find it
python3 -m pip wheel -q --no-deps --wheel-dir "${WHEELS}" "antlr4-python3-runtime==4.9.3"
python3 -m pip download -q --dest "${WHEELS}" --python-version "${PY}" \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform any --only-binary=:all: \
    --find-links "${WHEELS}" \
    "gymnasium>=1.0" "hydra-core>=1.3" "omegaconf>=2.3" "tqdm>=4.66" "fastapi>=0.110" \
    "uvicorn>=0.29" "orjson>=3.9" "uvloop>=0.19" "httptools>=0.6" setuptools wheel \
    "fastapi-offline>=1.7"
du -sh "${WHEELS}"
ls "${WHEELS}" | wc -l
