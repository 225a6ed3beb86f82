#!/bin/bash
# A Slurm job array of 4 shards (docs/scale.md#a-slurm-job-array):
#   sbatch docs/scale/slurm-shards.sh DIR COMMAND [FLAGS...]
# Every task runs the same retrysim command line; retrysim takes the shard
# from SLURM_ARRAY_TASK_ID and the number of shards from
# SLURM_ARRAY_TASK_COUNT, and writes DIR/shard-I-of-4.json. DIR must be on
# a file system every node sees (the submission directory usually is).
#SBATCH --job-name=retrysim-shards
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --mem=256M
#SBATCH --time=01:00:00
#SBATCH --output=retrysim-shards-%A_%a.log
set -euo pipefail
dir=$1
shift
# Slurm may not confine a task to its cores; Go would use them all.
export GOMAXPROCS=${SLURM_CPUS_PER_TASK:-1}
exec retrysim "$@" --shard-out "$dir/"
