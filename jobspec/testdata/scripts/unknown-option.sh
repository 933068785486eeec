#!/bin/bash
#SBATCH -J typo
#SBATCH --cpus-per-tsk=4
run
