#!/bin/bash
#SBATCH -c48 -N1 -n1 --mem=190gb -pbigmem -Jbig-mem
#SBATCH -t1-0
./assemble --threads 48
