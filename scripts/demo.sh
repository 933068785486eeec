#!/usr/bin/env bash
# The seed scenario (Backend.AI "Job scheduler" tutorial): a single-host
# cluster with 2 CPUs and one (mocked) GPU worth 2 fGPU; three sessions of
# 1 CPU and 1 fGPU each: two run, one waits for Resources; cancel a running
# one and the waiting one starts at once; the resource view rises and falls
# by exactly each job's request.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (jobs run in containers under cgroups)" >&2; exit 1; }

state=$(mktemp -d /tmp/corral-demo.XXXXXX)
sock=$state/ctld.sock
export CORRAL_SOCKET=$sock
work=$state/work; mkdir -p "$work"; chmod 777 "$work"; cd "$work"

"$BIN/corral" dev --state "$state/dev" --socket "$sock" --cpus 2 --mem 2G \
  --gpu-mock dgxa100 --gpu-mock-count 1 --fgpu-per-gpu 2 >"$state/dev.out" 2>"$state/dev.err" &
dev=$!
cleanup() {
  kill -TERM $dev 2>/dev/null || true
  wait $dev 2>/dev/null || true
  rm -rf "$state"
}
trap cleanup EXIT
for _ in $(seq 1 300); do
  grep -q ready "$state/dev.out" 2>/dev/null && break
  kill -0 $dev 2>/dev/null || { echo "demo: corral dev failed:"; cat "$state/dev.err"; exit 1; }
  sleep 0.1
done
grep -q ready "$state/dev.out" || { echo "demo: cluster not ready in 30s"; cat "$state/dev.err"; exit 1; }

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { "$BIN/corral" queue; echo; "$BIN/corral" nodes --gpus; echo; "$BIN/corral" usage; }

step "A single-host cluster with 2 CPUs and 1 GPU = 2 fGPU is up"
"$BIN/corral" nodes --gpus

step "Submit 3 sessions of 1 CPU and 1 fGPU each (sleep 60)"
ids=()
for i in 1 2 3; do
  id=$("$BIN/corral" submit --parsable -c 1 --mem 256M --fgpu 1 -J "session$i" --wrap "sleep 60")
  echo "Submitted batch job $id"
  ids+=("$id")
done
sleep 0.5
show

running=$("$BIN/corral" queue -t R --json | grep -o '"id": *[0-9]*' | head -1 | grep -o '[0-9]*$')
step "Cancel running job $running: the pending job starts"
"$BIN/corral" cancel "$running"
sleep 0.5
show

step "Cancel everything: CPUs and fGPU fall back to 0/2"
"$BIN/corral" cancel "${ids[@]}" 2>/dev/null || true
sleep 1
show

step "Finished jobs stay on record"
for id in "${ids[@]}"; do "$BIN/corral" show job "$id" | grep -E "JobId=|JobState="; done
step "Demo done; stopping the cluster"
