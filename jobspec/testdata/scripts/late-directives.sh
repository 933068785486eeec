#!/bin/bash
#SBATCH -J early
#SBATCH -c 2

echo "starting"
#SBATCH -c 64
#SBATCH --mem=500G
python work.py
