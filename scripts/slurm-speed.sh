#!/usr/bin/env bash
# Issue 14's speed target, side by side with Slurm on this machine: the
# whole-process time of `sbatch -H --wrap true` and of `squeue -h -o %i`
# with JOBS jobs queued, corral's (bin/slurm, on a one-node `corral dev`)
# and Slurm's (a loopback Slurm 22.05, scripts/slurm-up.sh), run
# alternately so that the machine's other load falls on both alike.
# Prints min and median wall time per command and side, and the ratio
# of the medians (corral / Slurm).
#   scripts/slurm-speed.sh [JOBS] [RUNS]   (as root, after make build;
#                                          default 60 jobs, 300 runs)
# The JOBS submits of each side are the sbatch samples; each squeue
# runs RUNS times against the JOBS held jobs. With SLURM_SPEED_BASE set to
# another corral binary (an older build), it is measured alongside, on
# the same cluster, as "corral-base" (its submits are cancelled before
# the squeue runs, so both see the same queue).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${1:-60}
runs=${2:-300}
[ "$(id -u)" -eq 0 ] || { echo "slurm-speed: run as root" >&2; exit 1; }
[ -x bin/slurm/sbatch ] || { echo "slurm-speed: bin/slurm missing: run make build" >&2; exit 1; }
tmp=$(mktemp -d /tmp/slurm-speed.XXXXXX)
sdir=$tmp/slurm
dev=
cleanup() {
  if [ -n "$dev" ]; then
    kill -TERM "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
  fi
  "$root/scripts/slurm-down.sh" "$sdir" || true
  rm -rf "$tmp"
}
trap cleanup EXIT

bin/corral dev --state "$tmp/corral" --socket "$tmp/ctld.sock" --cpus 2 --mem 4G >"$tmp/dev.out" 2>"$tmp/dev.err" &
dev=$!
scripts/slurm-up.sh "$sdir" >/dev/null
for _ in $(seq 300); do
  grep -q ready "$tmp/dev.out" 2>/dev/null && break
  kill -0 "$dev" 2>/dev/null || { echo "slurm-speed: corral dev failed:" >&2; cat "$tmp/dev.err" >&2; exit 1; }
  sleep 0.1
done
mkdir -p "$tmp/work"
cd "$tmp/work"

# Both sides' commands by absolute path, each with only its own
# environment: corral's find the controller by CORRAL_SOCKET, Slurm's by
# SLURM_CONF.
corral() { CORRAL_SOCKET=$tmp/ctld.sock "$root/bin/slurm/$1" "${@:2}"; }
slurm() { SLURM_CONF=$sdir/slurm.conf "/usr/bin/$1" "${@:2}"; }
sides=(corral slurm)
if [ -n "${SLURM_SPEED_BASE:-}" ]; then
  # Called by a Slurm name, as bin/slurm's links call bin/corral.
  mkdir -p "$tmp/base"
  for c in sbatch squeue scancel; do ln -s "$(realpath "$SLURM_SPEED_BASE")" "$tmp/base/$c"; done
  corral-base() { CORRAL_SOCKET=$tmp/ctld.sock "$tmp/base/$1" "${@:2}"; }
  sides=(corral corral-base slurm)
fi

# childcpu: sets cpu to the CPU time (user + system) of this shell's
# finished children so far, in milliseconds, from the builtin times
# (10 ms ticks: one sample is coarse, the mean of hundreds is not). It
# forks nothing, so that only the measured commands count.
childcpu() {
  local u s ms=0 v m sec
  times >"$tmp/times"
  { read -r _ _; read -r u s; } <"$tmp/times"
  for v in "$u" "$s"; do
    m=${v%%m*}
    sec=${v#*m}
    sec=${sec%s}
    ms=$((ms + m * 60000 + 10#${sec%.*} * 1000 + 10#${sec#*.}))
  done
  cpu=$ms
}

# sample FILE SIDE CMD...: appends CMD's wall time in microseconds
# (bash's EPOCHREALTIME before and after, the same overhead on both
# sides) to FILE, its CPU time in milliseconds to FILE.cpu and its
# output to FILE.out; a failing command stops the measurement.
sample() {
  local file=$1 side=$2 t0 t1 c0 c1
  shift 2
  childcpu
  c0=$cpu
  t0=$EPOCHREALTIME
  "$side" "$@" >>"$file.out" || { echo "slurm-speed: $side $* failed" >&2; exit 1; }
  t1=$EPOCHREALTIME
  childcpu
  c1=$cpu
  echo $(((${t1/./} - ${t0/./}))) >>"$file"
  echo $((c1 - c0)) >>"$file.cpu"
}

# rotation I: the sides in the order that starts at I mod their count,
# so that none always runs first (after the machine's other work) or
# right after another.
rotation() {
  local n=${#sides[@]} k
  for ((k = 0; k < n; k++)); do echo "${sides[(($1 + k) % n)]}"; done
}
for ((i = 0; i < jobs; i++)); do
  for side in $(rotation "$i"); do
    sample "$tmp/sbatch.$side" "$side" sbatch -H --wrap true
  done
done
if [ "${#sides[@]}" -eq 3 ]; then
  mapfile -t base_ids < <(awk '{print $4}' "$tmp/sbatch.corral-base.out")
  corral scancel "${base_ids[@]}"
fi
[ "$(corral squeue -h -o %i | wc -l)" -eq "$jobs" ] && [ "$(slurm squeue -h -o %i | wc -l)" -eq "$jobs" ] ||
  { echo "slurm-speed: expected $jobs jobs queued on each side" >&2; exit 1; }
for ((i = 0; i < runs; i++)); do
  for side in $(rotation "$i"); do
    sample "$tmp/squeue.$side" "$side" squeue -h -o %i
  done
done

# stats FILE: "min median" in milliseconds.
stats() {
  sort -n "$1" | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
    printf "%.2f %.2f", v[1] / 1000, m / 1000}'
}
printf '%-32s %-12s %8s %8s %14s %9s\n' "command ($jobs jobs queued)" "side" "min ms" "median" "median/Slurm" "CPU mean"
for c in sbatch squeue; do
  label="sbatch -H --wrap true (x$jobs)"
  [ "$c" = squeue ] && label="squeue -h -o %i (x$runs)"
  read -r _ smed <<<"$(stats "$tmp/$c.slurm")"
  for side in "${sides[@]}"; do
    read -r min med <<<"$(stats "$tmp/$c.$side")"
    cpu=$(awk '{s += $1} END {printf "%.2f", s / NR}' "$tmp/$c.$side.cpu")
    printf '%-32s %-12s %8s %8s %14.2f %9s\n' "$label" "$side" "$min" "$med" "$(echo "$med / $smed" | bc -l)" "$cpu"
    label=""
  done
done
