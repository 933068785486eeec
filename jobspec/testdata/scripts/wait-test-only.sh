#!/bin/sh
#SBATCH -W
#SBATCH --test-only
#SBATCH --quiet
true
