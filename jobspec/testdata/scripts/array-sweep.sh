#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=0-99%10
#SBATCH --output=logs/%x_%A_%a.out
#SBATCH --error=logs/%x_%A_%a.err
#SBATCH --time=30
#SBATCH --mem=4G
#SBATCH --cpus-per-task=2

python sweep.py --trial "$SLURM_ARRAY_TASK_ID"
