#!/bin/sh
# Snakemake's --cluster-status script for Slurm, as profiles write it:
# the allocation's state from sacct, mapped to success, failed or running.
state=$(sacct -P -n -X -j "$1" -o State | head -n 1)
case "$state" in
COMPLETED) echo success ;;
PENDING | RUNNING | REQUEUED | SUSPENDED | COMPLETING | CONFIGURING | "") echo running ;;
*) echo failed ;;
esac
