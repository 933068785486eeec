#!/bin/bash
#SBATCH -J from-script -t 10 -c 8 --partition=cpu
#SBATCH --export=NONE
./run "$@"
