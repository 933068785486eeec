#!/usr/bin/env bash
# Peak memory of a controller answering oversized cancel requests (issue 11,
# finding 5): starts a one-node `corral dev` cluster, sends N concurrent
# POST /v1/jobs/cancel bodies naming 499,999 job IDs each, and prints the
# answer's size and status and corral-ctld's VmHWM before and after.
#   scripts/cancel-memory.sh [CONCURRENT] [CTLD_BIN]     (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1}
ctld=${2:-bin/corral-ctld}
dir=$(mktemp -d /tmp/cm.XXXXXX)
trap 'kill "$dev" 2>/dev/null; wait "$dev" 2>/dev/null; rm -rf "$dir"' EXIT
sock="$dir/ctld.sock"
bin/corral dev --state "$dir/st" --socket "$sock" --ctld-bin "$ctld" --cpus 1 --mem 1G >"$dir/dev.log" 2>&1 &
dev=$!
for _ in $(seq 100); do [ -S "$sock" ] && CORRAL_SOCKET=$sock bin/corral nodes >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(pgrep -f -- "corral-ctld.*--socket $sock" | head -1)
hwm() { awk '/VmHWM/ {print $2/1024 " MB"}' "/proc/$pid/status"; }
echo "corral-ctld $ctld, VmHWM before: $(hwm)"
python3 -c 'import json; print(json.dumps({"ids": list(range(1, 500000))}))' >"$dir/body.json"
echo "body: $(stat -c %s "$dir/body.json") bytes, $n at once"
for i in $(seq "$n"); do
  curl -s --unix-socket "$sock" -o "$dir/ans$i" -w "%{http_code}\n" -X POST -H 'Content-Type: application/json' \
    --data-binary @"$dir/body.json" http://ctld/v1/jobs/cancel >"$dir/code$i" &
done
wait $(jobs -p | grep -v "^$dev$") 2>/dev/null || true
echo "answer: HTTP $(cat "$dir/code1"), $(stat -c %s "$dir/ans1") bytes"
echo "VmHWM after: $(hwm)"
