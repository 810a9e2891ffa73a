#!/usr/bin/env bash
# Data-parallel self-play training on a Slurm cluster: one torchrun launcher per node,
# one rank per GPU (NCCL), all nodes meeting at a c10d rendezvous on the first node.
#
#   sbatch examples/slurm_train.sh name=big model=mlp160 trainer.games=20000000
#   sbatch --nodes=4 examples/slurm_train.sh name=big ...      # more nodes, same command
#
# Arguments are Hydra overrides of `nard train`. `resume=auto` is always passed, so a
# requeued or resubmitted job continues from runs/<name>/checkpoints/last.pt, with the
# same or another number of nodes. The run folder must be on a filesystem every node
# sees (rank 0 writes it, every rank reads last.pt when resuming). CPU-only clusters:
# set NPROC_PER_NODE (e.g. the cores per node / 2) and device=cpu; the ranks use Gloo.
# Submit from the repository root (the job runs scripts/train.py and .venv from there).
#
#SBATCH --job-name=nard-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=32
#SBATCH --time=24:00:00
#SBATCH --requeue
#SBATCH --output=%x-%j.out

set -euo pipefail

PYTHON=${PYTHON:-.venv/bin/python}
NPROC_PER_NODE=${NPROC_PER_NODE:-${SLURM_GPUS_ON_NODE:-1}}
NNODES=${SLURM_JOB_NUM_NODES:-1}
HEAD=$(scontrol show hostnames "${SLURM_JOB_NODELIST:?run this script with sbatch}" | head -n 1)
PORT=${MASTER_PORT:-29500}

echo "nodes ${NNODES} x ${NPROC_PER_NODE} ranks, rendezvous ${HEAD}:${PORT}, overrides: $*"

# srun starts one launcher per node (ntasks-per-node=1); --kill-on-bad-exit ends the whole
# job when a node fails, so no rank is left waiting in a collective.
srun --kill-on-bad-exit=1 "${PYTHON}" -m torch.distributed.run \
    --nnodes="${NNODES}" \
    --nproc_per_node="${NPROC_PER_NODE}" \
    --rdzv_id="${SLURM_JOB_ID}" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="${HEAD}:${PORT}" \
    scripts/train.py resume=auto "$@"
