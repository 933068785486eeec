#!/bin/bash
#SBATCH -c 2
echo hi
