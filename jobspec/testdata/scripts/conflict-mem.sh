#!/bin/bash
#SBATCH --mem=16G
#SBATCH --mem-per-cpu=4G
run
