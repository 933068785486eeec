#!/bin/bash
#SBATCH --bb="capacity=100G"
#SBATCH -d afterburstbuffer:3001
./after-stage-out
