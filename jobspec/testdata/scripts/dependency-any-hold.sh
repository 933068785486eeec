#!/bin/bash
#SBATCH -J retry
#SBATCH -d afternotok:2001?after:2002+15
#SBATCH -H
#SBATCH --nice=50
#SBATCH --no-requeue
./retry.sh
