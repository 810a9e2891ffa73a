#!/usr/bin/env bash
# Wheels for a GPU machine that reaches no package registry: what the labelling burst
# (scripts/gpu_label.sh) imports beyond what such a machine's Python 3.12 already holds
# (CUDA PyTorch, numba, numpy, PyYAML, tqdm, packaging), downloaded here into WHEELS
# (default .whl, ignored by git) without their dependencies.
#
# Only these travel: the working tree and the wheels go to that machine together within
# 64 MiB, and the full dependency set (the server's FastAPI stack, gymnasium, a second
# numpy) is some 28 MB, which with the committed dataset would not fit.  The burst runs
# `python -m nard_rl pipeline stage=label` and `nard dataset`, which import nothing else.
#
#   scripts/gpu_wheels.sh            # then carry .whl along with the working tree
set -euo pipefail
WHEELS=${WHEELS:-.whl}
PY=${PY:-3.12}
LIMIT_MB=${LIMIT_MB:-64}
mkdir -p "${WHEELS}"
# hydra's parser runtime is published as a source archive only: build its (pure Python)
# wheel here, then let the binary-only download find it
python3 -m pip wheel -q --no-deps --wheel-dir "${WHEELS}" "antlr4-python3-runtime==4.9.3"
python3 -m pip download -q --no-deps --dest "${WHEELS}" --python-version "${PY}" \
    --platform any --only-binary=:all: --find-links "${WHEELS}" \
    "hydra-core>=1.3,<1.4" "omegaconf>=2.3,<2.4"  # hydra 1.3 takes omegaconf 2.3 only
ls "${WHEELS}"
wheels=$(du -cb "${WHEELS}"/*.whl | tail -1 | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2> /dev/null | awk '/\ttotal$/ { s += $1 } END { print s }')
total=$(( wheels + tree ))
echo "wheels ${wheels} bytes; tracked tree ${tree} bytes; together $(( total / 1048576 )) MiB of ${LIMIT_MB}"
if [ "${total}" -gt $(( LIMIT_MB * 1048576 )) ]; then
    echo "too large to travel: the dataset's budget (nard_rl/training/supervised/dataset.py) is past what fits" >&2
    exit 1
fi
