#!/usr/bin/env bash
# The GPU check, in one short run (about 5 minutes on one GPU): the GPU tests, a training
# smoke run on CUDA resumed on the CPU and back, a network evaluation on CUDA, and
# self-play training games/s at several batch sizes (CUDA, with the CPU next to it).
#
#   scripts/gpu_check.sh OUT_DIR          # or: NARD_GPU_CHECK_OUT=OUT_DIR scripts/gpu_check.sh
#
# Everything goes to OUT_DIR/gpu_check.txt (a summary line per step at the end) and
# OUT_DIR/*.log; the exit status is non-zero when any step failed. Needs a PyTorch build
# with CUDA in the environment (PYTHON, default .venv/bin/python); the figures belong in
# docs/scaling.md (GPU path) and docs/results.md (speed).

set -uo pipefail

OUT=${1:-${NARD_GPU_CHECK_OUT:-gpu_check_out}}
PYTHON=${PYTHON:-.venv/bin/python}
SECONDS_PER_CONFIG=${SECONDS_PER_CONFIG:-8}
BATCHES=${BATCHES:-"1024 4096 16384"}
mkdir -p "${OUT}"
SUMMARY="${OUT}/gpu_check.txt"
: > "${SUMMARY}"
status=0

step() {  # step NAME TIMEOUT_S CMD...: run, log, record the outcome
    local name=$1 limit=$2
    shift 2
    local t0=${EPOCHSECONDS}
    echo "== ${name}: $*" | tee -a "${SUMMARY}"
    timeout "${limit}" "$@" > "${OUT}/${name}.log" 2>&1
    local rc=$?
    echo "   rc=${rc} in $((EPOCHSECONDS - t0)) s (log: ${name}.log)" | tee -a "${SUMMARY}"
    [ "${rc}" -eq 0 ] || status=1
    return "${rc}"
}

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    nproc
} >> "${SUMMARY}"
CHECK='import sys, torch
ok = torch.cuda.is_available()
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if ok else "NO CUDA")
sys.exit(0 if ok else 1)'
if ! "${PYTHON}" -c "${CHECK}" >> "${SUMMARY}" 2>&1; then
    echo "no CUDA device visible to ${PYTHON}: install a CUDA build of PyTorch" | tee -a "${SUMMARY}"
    exit 2
fi

# 1. GPU tests: resume across devices (cuda->cuda, cuda->cpu, cpu->cuda), CUDA self-play
step gpu_tests 240 "${PYTHON}" -m pytest -m gpu -q -p no:cacheprovider \
    tests/test_distributed.py tests/test_supervised.py

# 2. the Hydra app on CUDA (device=auto must pick it), then resumed on the CPU
step train_cuda 150 "${PYTHON}" scripts/train.py trainer=smoke device=auto \
    out_dir="${OUT}/runs" name=smoke
step train_resume_cpu 150 "${PYTHON}" scripts/train.py trainer=smoke device=cpu \
    out_dir="${OUT}/runs" name=smoke trainer.games=300 resume=auto
step checkpoint_meta 60 "${PYTHON}" -c "
from nard_rl.nets.network import load_checkpoint
c = load_checkpoint('${OUT}/runs/smoke/checkpoints/last.pt')
h = [(x['from_games'], x['config']['device']) for x in c['extra']['history']]
print('games', c['games'], 'history', h, 'meta', c['extra']['distributed'])
assert c['games'] >= 300 and len(h) == 2
"

# 3. a network evaluation on CUDA
step evaluate_cuda 120 "${PYTHON}" -m nard_rl evaluate default pubeval --games 2000 \
    --device cuda --json --no-progress

# 4. games/s at several batch sizes (both configurations: 198-80 and the shipped net)
for b in ${BATCHES}; do
    step "bench_cuda_${b}" 150 "${PYTHON}" scripts/bench_train.py --device cuda \
        --parallel "${b}" --seconds "${SECONDS_PER_CONFIG}" --warmup-plies 30
done
step bench_cpu_1024 120 "${PYTHON}" scripts/bench_train.py --device cpu --parallel 1024 \
    --seconds "${SECONDS_PER_CONFIG}" --warmup-plies 30

# 5. 2-ply labels of the shipped net (the pipeline's costliest stage), one worker, 500
# decisions: the teacher's net on CUDA, then on the CPU (each step's time is the figure)
for dev in cuda cpu; do
    step "label_2ply_${dev}" 300 "${PYTHON}" -m nard_rl pipeline out_dir="${OUT}/runs" \
        name="label_${dev}" stage=label label.ply=2 label.race_net=true label.shards=1 \
        label.decisions_per_shard=500 device="${dev}" progress=false
done

{
    echo
    echo "== figures"
    for f in "${OUT}"/bench_*.log; do
        echo "-- $(basename "${f}" .log)"
        grep -E "games/s" "${f}"
    done
    echo "-- evaluate_cuda"
    tail -n 1 "${OUT}/evaluate_cuda.log"
    echo "-- gpu_tests"
    grep -E "passed|failed|error|skipped" "${OUT}/gpu_tests.log" | tail -n 1
    echo "overall status ${status}"
} >> "${SUMMARY}" 2>&1
cat "${SUMMARY}"
exit "${status}"
