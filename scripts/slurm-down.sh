#!/usr/bin/env bash
# Stops the loopback Slurm that scripts/slurm-up.sh started in DIR: its
# jobs, both slurmd, slurmctld and munged, by the pids they wrote there,
# and waits until none is left; then removes DIR.
#   scripts/slurm-down.sh [DIR]   (DIR default /tmp/corral-slurm)
set -uo pipefail
dir=${1:-/tmp/corral-slurm}
[ -d "$dir" ] || exit 0
dir=$(realpath "$dir")
if [ -e "$dir/slurm.conf" ] && [ -e "$dir/slurmctld.pid" ]; then
  # Running jobs' steps are children of slurmstepd, not of slurmd; cancel
  # them first so no job outlives its daemons.
  SLURM_CONF=$dir/slurm.conf scancel --quiet --user=root --full 2>/dev/null || true
fi
pids=()
for f in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
  [ -s "$f" ] || continue
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null && pids+=("$p")
  fi
done
# Daemons whose pid file is gone: found by this directory's paths on
# their command lines, which only they carry.
for p in $(pgrep -f -- "-f $dir/slurm.conf" 2>/dev/null) $(pgrep -f -- "--socket=$dir/munge/munge.socket" 2>/dev/null); do
  if kill -TERM "$p" 2>/dev/null; then pids+=("$p"); fi
done
# A job step's slurmstepd outlives its slurmd; ours carry this Slurm's
# SLURM_CONF in their environment (slurm-up.sh starts slurmd with it).
for p in $(pgrep -x slurmstepd 2>/dev/null); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf"; then
    kill -KILL "$p" 2>/dev/null && pids+=("$p")
  fi
done
for _ in $(seq 100); do
  left=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
  [ "$left" -eq 0 ] && break
  sleep 0.1
done
for p in "${pids[@]}"; do
  kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
done
rm -rf "$dir"
