#!/bin/bash
#SBATCH -n 64
#SBATCH --ntasks-per-node=16
#SBATCH --mem-per-cpu=1500M
srun ./solver
