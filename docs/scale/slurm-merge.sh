#!/bin/bash
# The merge of a Slurm job array's shards (docs/scale.md#a-slurm-job-array),
# run after every task of the array succeeded:
#   sbatch --dependency=afterok:ARRAY_JOB_ID --kill-on-invalid-dep=yes \
#     --output=RESULT docs/scale/slurm-merge.sh DIR
# The merged output is the job's standard output, RESULT; messages go to
# retrysim-merge-JOBID.log.
#SBATCH --job-name=retrysim-merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=256M
#SBATCH --time=00:10:00
#SBATCH --output=retrysim-merge-%j.out
#SBATCH --error=retrysim-merge-%j.log
set -euo pipefail
exec retrysim merge "$1"
