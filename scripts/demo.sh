#!/usr/bin/env bash
# The seed scenario (Backend.AI "Job scheduler" tutorial, on CPUs): a
# single-host cluster with 2 CPUs, three 1-CPU jobs, two run and one waits
# for Resources; cancel a running one and the waiting one starts at once.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (jobs run in containers under cgroups)" >&2; exit 1; }

state=$(mktemp -d /tmp/corral-demo.XXXXXX)
sock=$state/ctld.sock
export CORRAL_SOCKET=$sock
work=$state/work; mkdir -p "$work"; chmod 777 "$work"; cd "$work"

"$BIN/corral" dev --state "$state/dev" --socket "$sock" --cpus 2 --mem 2G >"$state/dev.out" 2>"$state/dev.err" &
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
show() { "$BIN/corral" queue; echo; "$BIN/corral" nodes; }

step "A single-host cluster with 2 CPUs is up"
"$BIN/corral" nodes

step "Submit 3 jobs of 1 CPU each (sleep 60)"
ids=()
for i in 1 2 3; do
  id=$("$BIN/corral" submit --parsable -c 1 --mem 256M -J "session$i" --wrap "sleep 60")
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

step "Cancel everything: CPUs fall back to 0/2"
"$BIN/corral" cancel "${ids[@]}" 2>/dev/null || true
sleep 1
show

step "Finished jobs stay on record"
for id in "${ids[@]}"; do "$BIN/corral" show job "$id" | grep -E "JobId=|JobState="; done
step "Demo done; stopping the cluster"
