#!/usr/bin/env bash
# One labelling burst on a many-core machine with a GPU: WORKERS label workers (default one
# per core) label self-play decisions at PLY (default 2) with the default make-up (contact
# net + race net + bear-off database; the contact net's search on DEVICE, default cuda when
# present) for MINUTES (default 10), then every finished shard is kept as dataset parts
# (nard_rl/training/supervised/dataset.py) and packed into OUT/labels.tar (a few MB; split into
# 15 MB pieces if larger) so it comes back whole.
#
#   scripts/gpu_label.sh OUT                                  # on the GPU machine
#   WORKERS=2 DEVICE=cpu MINUTES=1 scripts/gpu_label.sh OUT   # the same, tried on a CPU
#
# Back home: `tar -xf OUT/labels.tar -C datasets --strip-components=1 && nard dataset card`
# (or `cat OUT/labels.tar.* > labels.tar` first). SEED must differ from every seed the
# dataset card lists (default: the minute the burst starts). When WHEELS (default .whl)
# holds wheels (made by scripts/gpu_wheels.sh) they are installed first, with no index:
# that machine reaches no package registry.

set -uo pipefail

OUT=${1:?usage: scripts/gpu_label.sh OUT}
PYTHON=${PYTHON:-python3}
WORKERS=${WORKERS:-$(nproc)}
MINUTES=${MINUTES:-10}
PLY=${PLY:-2}
DECISIONS=${DECISIONS:-100}
SEED=${SEED:-$(( $(date +%s) / 60 % 1000000 + 1000 ))}
WHEELS=${WHEELS:-.whl}
if [ -z "${DEVICE:-}" ]; then
    DEVICE=$("${PYTHON}" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')
fi
mkdir -p "${OUT}"
LOG="${OUT}/gpu_label.txt"
: > "${LOG}"

# the wheels and the checkout itself (built here, without isolation: setuptools is there)
# go to a folder of their own, with no dependencies (the machine holds the rest) and no index
if [ -d "${WHEELS}" ] && ls "${WHEELS}"/*.whl > /dev/null 2>&1; then
    SITE="${OUT}/site"
    "${PYTHON}" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
        --target "${SITE}" "${WHEELS}"/*.whl . >> "${LOG}" 2>&1 \
        || echo "wheel install failed (see ${LOG})" | tee -a "${LOG}"
    # and the installed copy is the one imported, not the checkout in the working folder
    export PYTHONPATH="${SITE}${PYTHONPATH:+:${PYTHONPATH}}" PYTHONSAFEPATH=1
fi

RUN="${OUT}/runs"
SHARDS=$(( WORKERS * 200 ))  # far more than a burst finishes: it stops at MINUTES
{
    date -u
    echo "workers=${WORKERS} device=${DEVICE} ply=${PLY} minutes=${MINUTES} seed=${SEED}"
    echo "decisions per shard=${DECISIONS}"
} | tee -a "${LOG}"

pids=()
for ((k = 0; k < WORKERS; k++)); do
    timeout --signal=TERM "$(awk "BEGIN { print ${MINUTES} * 60 }")" \
        "${PYTHON}" -m nard_rl pipeline name=burst out_dir="${RUN}" seed="${SEED}" \
        generations=1 stage=label label.ply="${PLY}" label.race_net=true \
        label.shards="${SHARDS}" label.decisions_per_shard="${DECISIONS}" threads=1 \
        device="${DEVICE}" shard="${k}" num_shards="${WORKERS}" progress=false dataset=null \
        > "${OUT}/worker_${k}.log" 2>&1 &
    pids+=($!)
    # the first worker copies the teacher into the run folder: let it do so alone
    if [ "${k}" -eq 0 ]; then
        for _ in $(seq 1 120); do [ -f "${RUN}/burst/best.pt" ] && break; sleep 1; done
    fi
done
wait "${pids[@]}"

SHARD_DIR="${RUN}/burst/gen_001/shards"
done_shards=$(ls "${SHARD_DIR}"/shard_*.npz 2> /dev/null | wc -l)
echo "finished shards: ${done_shards} of ${DECISIONS} decisions each" | tee -a "${LOG}"
if [ "${done_shards}" -eq 0 ]; then
    echo "no shard finished: raise MINUTES or lower DECISIONS" | tee -a "${LOG}"
    exit 1
fi
rm -f "${SHARD_DIR}"/*.tmp
"${PYTHON}" -m nard_rl dataset --root "${OUT}/datasets" add "${SHARD_DIR}" \
    --teacher nard-default --checkpoint "${RUN}/burst/best.pt" | tee -a "${LOG}" || exit 1
"${PYTHON}" -m nard_rl dataset --root "${OUT}/datasets" info | tee -a "${LOG}"
tar -cf "${OUT}/labels.tar" -C "${OUT}" datasets
size=$(stat -c %s "${OUT}/labels.tar")
if [ "${size}" -gt $(( 15 * 1024 * 1024 )) ]; then
    split -b 15M -d "${OUT}/labels.tar" "${OUT}/labels.tar."
    rm "${OUT}/labels.tar"
fi
rm -rf "${RUN}" "${OUT}/datasets" "${OUT}/site"
echo "packed ${size} bytes" | tee -a "${LOG}"
