#!/bin/sh
#SBATCH --input=data/%x.in
#SBATCH --begin=2026-04-01T08:00
#SBATCH -o /dev/null
./filter
