#!/bin/bash
#SBATCH --export=NONE
#SBATCH --export=EDITOR,ARG1=test,OMP_NUM_THREADS=8
env | sort
