#!/bin/bash
#CORRAL --container-image nvcr.io/nvidia/pytorch:24.05-py3
#CORRAL --mount /datasets/imagenet:/data:ro --mount /scratch/alice:/scratch
#CORRAL --shm 8G
#SBATCH --gpus-per-node=2 -c 16 --mem=64G
python train.py --data /data
