#!/usr/bin/env bash
# Issue 13's srun speed targets, side by side with Slurm on this machine:
# corral's srun (bin/slurm, a two-node `corral dev`) and Slurm 22.05's (a
# loopback Slurm, scripts/slurm-up.sh, also two nodes), interleaved in a
# rotating order each round, each whole process timed by the caller:
#   c-out / s-out  `srun -n1 true` outside an allocation (dev1 is taken by
#                  the allocation below, so it runs on dev2)
#   c-in / s-in    `srun --jobid J --overlap -n2 true` in a running
#                  two-CPU batch job on dev1
# Prints p50 and p90 in ms per command and side.
#   scripts/srun-speed.sh [ROUNDS]   (as root, after make build; default 30)
set -u
cd "$(dirname "$0")/.."
N=${1:-30}; R=$PWD
[ "$(id -u)" -eq 0 ] || { echo "srun-speed: run as root" >&2; exit 1; }
[ -x bin/slurm/srun ] || { echo "srun-speed: bin/slurm missing: run make build" >&2; exit 1; }
tmp=$(mktemp -d); sdir=$tmp/slurm; dc=; cj=; sj=
# One way out, whatever stops the run: the holding jobs cancelled, the
# cluster stopped (its jobs' containers with it), Slurm stopped.
cleanup() {
  [ -n "$cj" ] && CORRAL_SOCKET=$tmp/c.sock $R/bin/slurm/scancel $cj
  [ -n "$sj" ] && SLURM_CONF=$sdir/slurm.conf /usr/bin/scancel $sj
  [ -n "$cj$sj" ] && sleep 1
  [ -n "$dc" ] && { kill $dc; wait $dc; }
  [ -e $sdir/slurm.conf ] && $R/scripts/slurm-down.sh $sdir >/dev/null 2>&1
  rm -rf $tmp
}
trap cleanup EXIT
$R/bin/corral dev --state $tmp/c --socket $tmp/c.sock --nodes 2 --cpus 2 --mem 4G >$tmp/c.out 2>$tmp/c.err &
dc=$!
# Another loopback Slurm on this host takes the default ports:
# SLURM_UP_CTLD_PORT and SLURM_UP_NODE_PORT move this one's.
$R/scripts/slurm-up.sh $sdir >/dev/null ||
  { echo "srun-speed: the loopback Slurm did not start (ports taken? set SLURM_UP_CTLD_PORT, SLURM_UP_NODE_PORT)" >&2; exit 1; }
for _ in $(seq 300); do grep -q ready $tmp/c.out && break; sleep 0.1; done
cd $tmp
export CORRAL_SOCKET=$tmp/c.sock
cj=$($R/bin/slurm/sbatch --parsable -n2 -N1 -w dev1 --wrap 'sleep 3000')
sj=$(SLURM_CONF=$sdir/slurm.conf /usr/bin/sbatch --parsable -n2 -N1 -w dev1 --wrap 'sleep 3000')
[ -n "$cj" ] && [ -n "$sj" ] || { echo "srun-speed: a holding job was not submitted (corral: '$cj', Slurm: '$sj')" >&2; exit 1; }
sleep 3
declare -A t
one() {
  local s=$EPOCHREALTIME
  case $1 in
    c-out) $R/bin/slurm/srun -n1 true ;;
    s-out) SLURM_CONF=$sdir/slurm.conf /usr/bin/srun -n1 true ;;
    c-in) $R/bin/slurm/srun --jobid $cj --overlap -n2 true ;;
    s-in) SLURM_CONF=$sdir/slurm.conf /usr/bin/srun --jobid $sj --overlap -n2 true ;;
  esac
  local rc=$?
  local e=$EPOCHREALTIME
  [ $rc -eq 0 ] || echo "$1 rc=$rc" >&2
  t[$1]+="$(echo "($e-$s)*1000" | bc) "
}
order=(c-out s-out c-in s-in)
for i in $(seq $N); do
  for k in 0 1 2 3; do one ${order[$(( (i+k) % 4 ))]}; done
done
for s in c-out s-out c-in s-in; do
  printf '%s\n' ${t[$s]} | sort -n | awk -v n=$s '{a[NR]=$1} END{printf "%-6s p50 %6.1f  p90 %6.1f  (n=%d)\n", n, a[int(NR/2)+1], a[int(NR*0.9)+1], NR}'
done
