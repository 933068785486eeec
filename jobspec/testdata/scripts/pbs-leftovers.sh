#!/bin/bash
#PBS -l nodes=2:ppn=8
#PBS -q batch
#SBATCH --ignore-pbs
#SBATCH -N 2 --ntasks-per-node=8
mpirun ./a.out
