#!/bin/bash
# Comments and blank lines do not end the directives.

##SBATCH --time=999
#SBATCH --job-name "quoted.name"   # a trailing comment
   #SBATCH -c 99
#SBATCH --output="out dir/%j.log" --comment='it is #1'
#SBATCH --constraint="intel&ib"

srun ./app
