#!/usr/bin/env bash
# Real GPU check (docs/gpu.md): on a host with an NVIDIA GPU and its driver,
# start a single-host corral cluster on the real GPUs, run a 0.5-fGPU job
# and a whole-GPU job, and print what each sees from inside: its corral and
# CUDA variables, nvidia-smi, and a CUDA memory query (cuMemGetInfo through
# libcuda, with python3); then the same from a step started in a running
# half-GPU job (srun --overlap, seed 003's terminal). No GPU is mocked
# here: NVML reads the real ones.
#
#   make build && sudo scripts/gpu-check.sh [--fgpu-per-gpu N] [--keep]
#
# --fgpu-per-gpu N (default 1) is what one GPU is worth; the fractional job
# asks for N/2 fGPU, half a card whatever N is (the issue's "0.5-fGPU job"
# with the default). --keep leaves the state directory for a look at the
# daemons' logs.
# Exit status: 0 when both jobs completed and the step saw its job's GPU,
# 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
per=1
keep=
while [ $# -gt 0 ]; do
  case $1 in
  --fgpu-per-gpu) per=${2:?--fgpu-per-gpu needs a value}; shift 2 ;;
  --keep) keep=1; shift ;;
  *) echo "gpu-check: unknown option $1 (use --fgpu-per-gpu N, --keep)" >&2; exit 2 ;;
  esac
done

fail() { echo "gpu-check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root (jobs run in containers under cgroups)"
for b in corral corral-ctld corral-noded corral-shim corral-init; do
  [ -x "$BIN/$b" ] || fail "$BIN/$b is missing: run make build first"
done
command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: this check needs an NVIDIA GPU and its driver"
nvidia-smi -L >/dev/null 2>&1 || fail "nvidia-smi -L failed: is the NVIDIA driver loaded?"
gpus=$(nvidia-smi -L | grep -c '^GPU ' || true)
[ "$gpus" -ge 1 ] || fail "nvidia-smi lists no GPU"
command -v nvidia-cuda-mps-control >/dev/null ||
  echo "gpu-check: note: nvidia-cuda-mps-control is not on PATH: the fraction gets its limits from the environment only (no MPS daemon)" >&2

state=$(mktemp -d /tmp/corral-gpu-check.XXXXXX)
sock=$state/ctld.sock
export CORRAL_SOCKET=$sock
work=$state/work
mkdir -p "$work"
chmod 777 "$work"
cd "$work"

"$BIN/corral" dev --state "$state/dev" --socket "$sock" --fgpu-per-gpu "$per" >"$state/dev.out" 2>"$state/dev.err" &
dev=$!
cleanup() {
  kill -TERM $dev 2>/dev/null || true
  wait $dev 2>/dev/null || true
  if [ -n "$keep" ]; then echo "gpu-check: state kept in $state"; else rm -rf "$state"; fi
}
trap cleanup EXIT
for _ in $(seq 1 300); do
  grep -q ready "$state/dev.out" 2>/dev/null && break
  kill -0 $dev 2>/dev/null || { cat "$state/dev.err" >&2; fail "corral dev failed"; }
  sleep 0.1
done
grep -q ready "$state/dev.out" || { cat "$state/dev.err" >&2; fail "the cluster was not ready within 30s"; }

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Host: $gpus GPU(s), one worth $per fGPU"
nvidia-smi -L
"$BIN/corral" nodes
"$BIN/corral" nodes --gpus
grep -E 'gpu: ' "$state/dev/logs/dev1.log" || true

# What every job prints about itself.
cat >"$work/probe.sh" <<'EOF'
#!/bin/bash
echo "--- environment"
env | grep -E '^(CORRAL_FGPU|CORRAL_GPU_MEM|SLURM_JOB_GPUS|SLURM_GPUS_ON_NODE|CUDA_[A-Z_]*|NVIDIA_VISIBLE_DEVICES)=' | sort
echo "--- device nodes"
ls -l /dev/nvidia* 2>&1 | sed 's/^/  /'
echo "--- nvidia-smi"
nvidia-smi -L 2>&1
nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used --format=csv 2>&1
echo "--- CUDA (cuMemGetInfo through libcuda)"
if command -v python3 >/dev/null; then
  python3 - <<'PY'
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    sys.exit("no libcuda.so.1: %s" % e)
def check(r, what):
    if r != 0:
        sys.exit("%s failed: CUDA error %d" % (what, r))
check(cuda.cuInit(0), "cuInit")
n = ctypes.c_int()
check(cuda.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
print("CUDA devices visible:", n.value)
for i in range(n.value):
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), i), "cuDeviceGet")
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    sms = ctypes.c_int()
    cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev)  # MULTIPROCESSOR_COUNT
    ctx = ctypes.c_void_p()
    check(cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    check(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
    print("device %d: %s, %d SMs, memory total %d MiB, free %d MiB" % (i, name.value.decode(), sms.value, total.value >> 20, free.value >> 20))
    cuda.cuCtxDestroy_v2(ctx)
PY
else
  echo "python3 is not installed: no CUDA query"
fi
EOF
chmod 755 "$work/probe.sh"

ok=0
run_job() { # name, submit options...
  local name=$1
  shift
  step "Job $name: corral submit $*"
  local id
  id=$("$BIN/corral" submit --parsable -J "$name" -c 1 --mem 1G -t 5 "$@" "$work/probe.sh") || { ok=1; return; }
  "$BIN/corral" queue -j "$id" -t all
  local state
  for _ in $(seq 1 600); do
    state=$("$BIN/corral" show job "$id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in PENDING | RUNNING) sleep 0.5 ;; *) break ;; esac
  done
  "$BIN/corral" show job "$id" | grep -E 'JobState=|GPUsPerNode=|Message='
  cat "$work/corral-$id.out" 2>/dev/null || echo "(no output file)"
  [ "$state" = COMPLETED ] || ok=1
}

half=$(awk -v p="$per" 'BEGIN { printf "%.2f", p / 2 }')
run_job half-gpu --fgpu "$half"
run_job whole-gpu --gpus 1

# Seed 003: a terminal into a running session runs nvidia-smi there. The
# step is started inside the job's container as any srun --overlap step
# (corral-init forks it), so it must see the job's device and limits.
step "A step in a running half-GPU job: corral srun --jobid J --overlap probe.sh"
sid=$("$BIN/corral" submit --parsable -J session -c 1 --mem 1G -t 5 --fgpu "$half" --wrap 'sleep 300') || ok=1
for _ in $(seq 1 600); do
  state=$("$BIN/corral" show job "$sid" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  [ "$state" = PENDING ] || break
  sleep 0.5
done
if [ "$state" = RUNNING ]; then
  out=$("$BIN/corral" srun --jobid "$sid" --overlap "$work/probe.sh" 2>&1) || ok=1
  echo "$out"
  echo "$out" | grep -q '^CORRAL_FGPU=' || { echo "gpu-check: the step did not see the job's fGPU"; ok=1; }
else
  echo "gpu-check: the session job is $state, not RUNNING"
  ok=1
fi
"$BIN/corral" cancel "$sid" >/dev/null 2>&1 || true
for _ in $(seq 1 100); do
  "$BIN/corral" show job "$sid" | grep -q 'JobState=CANCELLED' && break
  sleep 0.2
done

step "Nodes after the jobs (fGPU back to 0)"
"$BIN/corral" nodes
if [ $ok -eq 0 ]; then echo "gpu-check: both jobs completed and the step saw the session's GPU"; else echo "gpu-check: a job or the step failed (see above)"; fi
exit $ok
