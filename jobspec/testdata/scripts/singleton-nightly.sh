#!/bin/bash
#SBATCH --job-name=nightly-backup
#SBATCH --dependency=singleton
#SBATCH --begin=midnight
rsync -a /data/ /backup/data/
