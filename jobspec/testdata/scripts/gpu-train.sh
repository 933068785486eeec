#!/bin/bash
#SBATCH -J llm-finetune
#SBATCH -p gpu
#SBATCH --gres=gpu:a100:4
#SBATCH -c 32
#SBATCH --mem=256G
#SBATCH -t 2-00:00:00
#SBATCH --signal=B:USR1@300
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH -o logs/%x-%j.out
#SBATCH -e logs/%x-%j.err

# The batch shell catches USR1 five minutes before the limit and checkpoints.
trap 'touch "$CKPT_DIR/requeue"' USR1
torchrun --nproc_per_node=4 train.py --resume &
wait
