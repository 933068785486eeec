#!/usr/bin/env bash
# Issue 13's srun speed targets, side by side with Slurm on this machine:
# corral's srun (bin/slurm, a two-node `corral dev`) and Slurm 22.05's (a
# loopback Slurm, scripts/slurm-up.sh, also two nodes), interleaved in a
# rotating order each round, each whole process timed by the caller:
#   c-out / s-out  `srun -n1 true` outside an allocation (dev1 is taken by
#                  the allocation below, so it runs on dev2)
#   c-in / s-in    `srun --jobid J --overlap -n2 true` in a running
#                  two-CPU batch job on dev1
# With SRUN_SPEED_BASE=DIR (the bin/ of another build, e.g. a copy of
# main's) that build runs too, on a cluster of its own, as b-out / b-in.
# With SRUN_SPEED_BLOCKS=1 each command runs all its rounds in a row
# instead (back to back, as a pipeline's loop calls srun).
# Prints p50 and p90 in ms per command and side.
#   scripts/srun-speed.sh [ROUNDS]   (as root, after make build; default 30)
set -u
cd "$(dirname "$0")/.."
N=${1:-30}; R=$PWD; B=${SRUN_SPEED_BASE:-}
[ "$(id -u)" -eq 0 ] || { echo "srun-speed: run as root" >&2; exit 1; }
[ -x bin/slurm/srun ] || { echo "srun-speed: bin/slurm missing: run make build" >&2; exit 1; }
[ -z "$B" ] || [ -x "$B/slurm/srun" ] || { echo "srun-speed: $B/slurm/srun missing (SRUN_SPEED_BASE is a build's bin/)" >&2; exit 1; }
tmp=$(mktemp -d); sdir=$tmp/slurm; sj=
declare -A bin=([c]=$R/bin) dev=() job=()
[ -n "$B" ] && bin[b]=$(cd "$B" && pwd)
# One way out, whatever stops the run: the holding jobs cancelled, the
# clusters stopped (their jobs' containers with them), Slurm stopped.
cleanup() {
  for k in "${!job[@]}"; do CORRAL_SOCKET=$tmp/$k.sock ${bin[$k]}/slurm/scancel ${job[$k]}; done
  [ -n "$sj" ] && SLURM_CONF=$sdir/slurm.conf /usr/bin/scancel $sj
  [ ${#job[@]} -gt 0 ] || [ -n "$sj" ] && sleep 1
  for k in "${!dev[@]}"; do kill ${dev[$k]}; wait ${dev[$k]}; done
  [ -e $sdir/slurm.conf ] && $R/scripts/slurm-down.sh $sdir >/dev/null 2>&1
  rm -rf $tmp
}
trap cleanup EXIT
for k in "${!bin[@]}"; do
  ${bin[$k]}/corral dev --state $tmp/$k --socket $tmp/$k.sock --nodes 2 --cpus 2 --mem 4G >$tmp/$k.out 2>$tmp/$k.err &
  dev[$k]=$!
done
# Another loopback Slurm on this host takes the default ports:
# SLURM_UP_CTLD_PORT and SLURM_UP_NODE_PORT move this one's.
$R/scripts/slurm-up.sh $sdir >/dev/null ||
  { echo "srun-speed: the loopback Slurm did not start (ports taken? set SLURM_UP_CTLD_PORT, SLURM_UP_NODE_PORT)" >&2; exit 1; }
cd $tmp
for k in "${!bin[@]}"; do
  for _ in $(seq 300); do grep -q ready $tmp/$k.out && break; sleep 0.1; done
  job[$k]=$(CORRAL_SOCKET=$tmp/$k.sock ${bin[$k]}/slurm/sbatch --parsable -n2 -N1 -w dev1 --wrap 'sleep 3000')
  [ -n "${job[$k]}" ] || { unset "job[$k]"; echo "srun-speed: the holding job of build $k was not submitted" >&2; exit 1; }
done
sj=$(SLURM_CONF=$sdir/slurm.conf /usr/bin/sbatch --parsable -n2 -N1 -w dev1 --wrap 'sleep 3000')
[ -n "$sj" ] || { echo "srun-speed: the holding job of Slurm was not submitted" >&2; exit 1; }
sleep 3
declare -A t
one() {
  local side=${1%-*} where=${1#*-} s=$EPOCHREALTIME
  case $side-$where in
    s-out) SLURM_CONF=$sdir/slurm.conf /usr/bin/srun -n1 true ;;
    s-in) SLURM_CONF=$sdir/slurm.conf /usr/bin/srun --jobid $sj --overlap -n2 true ;;
    *-out) CORRAL_SOCKET=$tmp/$side.sock ${bin[$side]}/slurm/srun -n1 true ;;
    *-in) CORRAL_SOCKET=$tmp/$side.sock ${bin[$side]}/slurm/srun --jobid ${job[$side]} --overlap -n2 true ;;
  esac
  local rc=$?
  local e=$EPOCHREALTIME
  [ $rc -eq 0 ] || echo "$1 rc=$rc" >&2
  t[$1]+="$(echo "($e-$s)*1000" | bc) "
}
order=(c-out s-out c-in s-in)
[ -n "$B" ] && order+=(b-out b-in)
n=${#order[@]}
if [ "${SRUN_SPEED_BLOCKS:-}" = 1 ]; then
  # Each command N times in a row, as a pipeline's loop runs it: what
  # one srun leaves to do (its job's end, the next spare) is then on the
  # next one's path.
  for s in "${order[@]}"; do for i in $(seq $N); do one $s; done; done
else
  for i in $(seq $N); do
    for k in $(seq 0 $((n - 1))); do one ${order[$(( (i + k) % n ))]}; done
  done
fi
for s in "${order[@]}"; do
  printf '%s\n' ${t[$s]} | sort -n | awk -v n=$s '{a[NR]=$1} END{printf "%-6s p50 %6.1f  p90 %6.1f  (n=%d)\n", n, a[int(NR/2)+1], a[int(NR*0.9)+1], NR}'
done
