#!/bin/sh
#SBATCH --begin=12/24-18:00
#SBATCH --time=UNLIMITED
echo merry
