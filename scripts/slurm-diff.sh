#!/usr/bin/env bash
# The differential check of issue 14: plays one small workload on a
# `corral dev` cluster (two nodes dev1, dev2 of 2 CPUs and 4 GB, partition
# batch) and on a loopback Slurm 22.05 of the same shape
# (scripts/slurm-up.sh), runs the command corpus scripts/slurm-diff.corpus
# on both, and prints, command by command, what differs field by field
# after normalising times, durations and directories
# (scripts/slurm-diff-compare.py). Job IDs are not rewritten: both
# clusters start empty and get the same submissions in the same order, so
# they hand out the same IDs.
#
#   scripts/slurm-diff.sh [OUTDIR]   (as root, after make build)
# Exits 0 when it ran, whatever the differences; the raw outputs stay in
# OUTDIR (default: a new temporary directory, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ "$(id -u)" -eq 0 ] || { echo "slurm-diff: run as root" >&2; exit 1; }
[ -x bin/slurm/squeue ] || { echo "slurm-diff: bin/slurm/squeue missing: run make build" >&2; exit 1; }
command -v python3 >/dev/null || { echo "slurm-diff: python3 is needed to compare" >&2; exit 1; }
keep=${1:-}
tmp=$(mktemp -d /tmp/slurm-diff.XXXXXX)
out=${keep:-$tmp/out}
mkdir -p "$out/corral" "$out/slurm"
sdir=$tmp/slurm
dev=
cleanup() {
  # corral's jobs outlive its daemons (their shims own them), so they are
  # cancelled, and their ends waited for, before corral dev stops.
  if [ -n "$dev" ]; then
    CORRAL_SOCKET=$tmp/ctld.sock bin/slurm/scancel -u root 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(CORRAL_SOCKET=$tmp/ctld.sock bin/slurm/squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
    kill -TERM "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
  fi
  scripts/slurm-down.sh "$sdir" || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# corral: two nodes as Slurm's, the same memory per CPU by default.
bin/corral dev --state "$tmp/corral" --socket "$tmp/ctld.sock" --nodes 2 --cpus 2 --mem 4G \
  >"$tmp/dev.out" 2>"$tmp/dev.err" &
dev=$!
scripts/slurm-up.sh "$sdir" >/dev/null
for _ in $(seq 300); do
  grep -q ready "$tmp/dev.out" 2>/dev/null && break
  kill -0 "$dev" 2>/dev/null || { echo "slurm-diff: corral dev failed:" >&2; cat "$tmp/dev.err" >&2; exit 1; }
  sleep 0.1
done
grep -q ready "$tmp/dev.out" || { echo "slurm-diff: corral dev not ready in 30 s" >&2; exit 1; }

# Each side runs in a work directory of its own (jobs write slurm-N.out
# there), which the comparison reads as <CWD>.
mkdir -p "$tmp/work-corral" "$tmp/work-slurm"
chmod 0777 "$tmp/work-corral" "$tmp/work-slurm"
basepath=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vx "$root/bin/slurm" | paste -sd:)
# side NAME CMDLINE: runs CMDLINE under bash as that side's user would.
side() {
  local name=$1 line=$2
  if [ "$name" = corral ]; then
    (cd "$tmp/work-corral" && env -u SLURM_CONF CORRAL_SOCKET="$tmp/ctld.sock" \
      PATH="$root/bin/slurm:$basepath" bash -c "$line")
  else
    (cd "$tmp/work-slurm" && env -u CORRAL_SOCKET SLURM_CONF="$sdir/slurm.conf" \
      PATH="$basepath" bash -c "$line")
  fi
}
# both CMDLINE: the workload's steps, on both sides; their output is not
# compared (the corpus repeats what matters), a failure stops the check.
both() {
  side corral "$1" >/dev/null || { echo "slurm-diff: corral: $1 failed" >&2; exit 1; }
  side slurm "$1" >/dev/null || { echo "slurm-diff: slurm: $1 failed" >&2; exit 1; }
}
# settle: waits until neither side has a job pending for a reason that a
# scheduling pass would change, so both show the same picture.
settle() {
  sleep 1
  for _ in $(seq 50); do
    local c s
    c=$(side corral "squeue -h -t PD -o '%r'" | grep -cE '^(None)$' || true)
    s=$(side slurm "squeue -h -t PD -o '%r'" | grep -cE '^(None)$' || true)
    [ "$c" -eq 0 ] && [ "$s" -eq 0 ] && return 0
    sleep 0.2
  done
}

# The workload: job 1 running on one node, 2 held, 3 running on both
# nodes, 4 waiting on 1, 5 too big to start now, 6 an array of which one
# task fits. The array comes last: Slurm gives a task its own job ID when
# it starts, corral numbers every task at submit, so IDs part after it.
both "sbatch -J 'lr=0.1 run:v2' -t 30 --wrap 'sleep 600'"
settle
both "sbatch -H -J held --mem 100M --wrap true"
both "sbatch -N 2 -J two -t 1:00:00 --wrap 'sleep 600'"
settle
both "sbatch -d afterok:1 -J dep --wrap true"
both "sbatch -c 2 --mem 1G -J big -t 2-00:00:00 --wrap 'sleep 600'"
settle
both "sbatch -a 0-3 -J arr --wrap 'sleep 600'"
settle

n=0
while IFS= read -r line; do
  case "$line" in '' | '#'*) continue ;; esac
  n=$((n + 1))
  id=$(printf '%03d' "$n")
  for s in corral slurm; do
    printf '%s\n' "$line" >"$out/$s/$id.cmd"
    set +e
    side "$s" "$line" >"$out/$s/$id.out" 2>"$out/$s/$id.err" </dev/null
    echo $? >"$out/$s/$id.rc"
    set -e
  done
done <scripts/slurm-diff.corpus

python3 scripts/slurm-diff-compare.py "$out" "$tmp/work-corral" "$tmp/work-slurm"
