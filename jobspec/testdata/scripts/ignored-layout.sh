#!/bin/bash
#SBATCH --ntasks=16 --hint=nomultithread --distribution=block:cyclic
#SBATCH --cpu-freq=high --sockets-per-node=2 --mail-type=ALL
#SBATCH --nodelist=node[01-04] --exclude=node07
srun ./stream
