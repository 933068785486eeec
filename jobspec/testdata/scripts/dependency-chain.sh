#!/bin/bash
#SBATCH -J postprocess
#SBATCH --dependency=afterok:1001:1002,afterany:1003_7
#SBATCH --kill-on-invalid-dep=yes
#SBATCH -t 1:00:00
./collect.sh results/
