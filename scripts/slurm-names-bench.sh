#!/usr/bin/env bash
# Whole-process time of the commands pipelines call in loops, under their
# Slurm names and as corral's own: starts a one-node `corral dev`, submits
# JOBS held jobs with `sbatch -H` and JOBS more with `corral submit -H`
# (timing each), then runs each listing RUNS times against that queue of
# 2 x JOBS jobs and prints the mean per run.
#   scripts/slurm-names-bench.sh [JOBS] [RUNS]     (as root, after make build)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-60}
runs=${2:-200}
dir=$(mktemp -d /tmp/snb.XXXXXX)
trap 'kill "$dev" 2>/dev/null; wait "$dev" 2>/dev/null; rm -rf "$dir"' EXIT
sock="$dir/ctld.sock"
bin/corral dev --state "$dir/st" --socket "$sock" --cpus 1 --mem 1G >"$dir/dev.log" 2>&1 &
dev=$!
export CORRAL_SOCKET=$sock
for _ in $(seq 100); do [ -S "$sock" ] && bin/corral nodes >/dev/null 2>&1 && break; sleep 0.1; done
cd "$dir"
slurm=$OLDPWD/bin/slurm corral=$OLDPWD/bin/corral

# mean NAME N CMD...: runs CMD N times and prints the mean wall time and
# the mean CPU time (user + system, which the machine's other load
# disturbs less) per run.
mean() {
  local name=$1 n=$2; shift 2
  local out
  out=$( { TIMEFORMAT='%R %U %S'; time (for _ in $(seq "$n"); do "$@" >/dev/null; done); } 2>&1 )
  read -r real user sys <<<"$out"
  printf '%-40s %7.2f ms wall %7.2f ms CPU\n' "$name" \
    "$(echo "$real * 1000 / $n" | bc -l)" "$(echo "($user + $sys) * 1000 / $n" | bc -l)"
}

mean "sbatch -H --wrap true (x$jobs)" "$jobs" "$slurm/sbatch" -H --wrap true
mean "corral submit -H --wrap true (x$jobs)" "$jobs" "$corral" submit -H --wrap true
echo "queue: $("$slurm/squeue" -h -o %i | wc -l) jobs"
mean "squeue -h -o %i" "$runs" "$slurm/squeue" -h -o %i
mean "squeue" "$runs" "$slurm/squeue"
mean "corral queue" "$runs" "$corral" queue
mean "sacct -P -n -X -o JobIDRaw,State" "$runs" "$slurm/sacct" -P -n -X -o JobIDRaw,State
mean "squeue --version (no request)" "$runs" "$slurm/squeue" --version
