#!/bin/bash
#SBATCH --job-name=report
#SBATCH --mail-type=BEGIN,END,FAIL
#SBATCH --mail-user=alice@example.org
#SBATCH --account=finance
#SBATCH --qos=normal
#SBATCH --comment="weekly report"
#SBATCH --time=0-00:20
./report.sh > report.txt
