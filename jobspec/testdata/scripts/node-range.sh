#!/bin/bash
#SBATCH --nodes=2-8
#SBATCH --ntasks-per-node=1
#SBATCH --use-min-nodes
srun hostname
