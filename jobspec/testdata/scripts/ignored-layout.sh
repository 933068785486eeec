#!/bin/bash
#SBATCH --ntasks=16 --hint=nomultithread --distribution=block:cyclic
#SBATCH --cpu-freq=high --sockets-per-node=2 --mail-type=ALL
srun ./stream
