#!/bin/bash
#SBATCH --array=10-1
echo never
