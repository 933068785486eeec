#!/bin/bash
#SBATCH -J late
#SBATCH --begin=25:00
echo never
