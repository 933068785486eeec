#!/bin/sh
#SBATCH -a 1-5,3,10-20:5
#SBATCH -t 5:00
echo "task $SLURM_ARRAY_TASK_ID"
