#!/bin/bash
#SBATCH -N 2 --nodelist=node[01-02] --exclude=node07,gpu[1-2]
#SBATCH -J "lr=0.1 run:v2"
srun ./stream
