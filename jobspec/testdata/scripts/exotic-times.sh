#!/bin/bash
#SBATCH -t 2-3
#SBATCH --begin=now+2hours
#SBATCH --time-min=1:00:00
#SBATCH --deadline=2026-03-20
sleep 60
