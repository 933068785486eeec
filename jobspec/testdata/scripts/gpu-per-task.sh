#!/bin/bash
#SBATCH -n 4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-gpu=8
#SBATCH --mem-per-gpu=32G
#SBATCH -t 4:00:00
srun python ddp.py
