#!/bin/bash
#SBATCH --job-name=lammps
#SBATCH --partition=compute
#SBATCH --account=chem
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=4
#SBATCH --mem-per-cpu=2G
#SBATCH --time=12:00:00
#SBATCH --exclusive
#SBATCH --output=%x-%j.out

module load openmpi/4.1
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
srun --mpi=pmix lmp -in in.lj
