#!/usr/bin/env bash
# Slurm job array over the job files of one experiment:
#   ssdlab experiment plan experiments/NAME --out jobs/NAME
#   sbatch --array=0-$(( $(ls jobs/NAME/*.json | wc -l) - 1 ))%64 scripts/slurm-array.sh jobs/NAME results/NAME
#   # when all tasks are done:
#   ssdlab experiment collect experiments/NAME --from results/NAME
#   ssdlab experiment report experiments/NAME
# Each task runs one point single-threaded; a failed task can simply be resubmitted.
#SBATCH --job-name=ssdlab
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
JOBS_DIR="${1:?job directory}"
OUT_DIR="${2:?result directory}"
SSDLAB="${SSDLAB:-ssdlab}"
mapfile -t FILES < <(ls "$JOBS_DIR"/*.json | sort)
FILE="${FILES[$SLURM_ARRAY_TASK_ID]}"
exec "$SSDLAB" run-spec "$FILE" --out "$OUT_DIR"
