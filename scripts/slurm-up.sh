#!/usr/bin/env bash
# Starts a loopback Slurm 22.05 (Debian's slurmctld, slurmd, munge) under a
# directory of its own, for side-by-side checks against corral
# (scripts/slurm-diff.sh, scripts/slurm-speed.sh). Nothing outside DIR is
# written or read: its own munge key and socket, its own slurm.conf,
# state, spool and logs. Two nodes named as `corral dev --nodes 2` names
# its nodes (dev1, dev2), each a slurmd of its own on 127.0.0.1 with its
# own port, 2 CPUs and 4096 MB each, in one default partition `batch`.
# No cgroups (proctrack/linuxproc, task/none) and no slurmdbd: sacct and
# sshare need slurmdbd's accounting, so they are not part of the checks.
#
#   scripts/slurm-up.sh [DIR]   (as root; DIR default /tmp/corral-slurm)
# prints the line to eval, `export SLURM_CONF=DIR/slurm.conf`; stop it
# with scripts/slurm-down.sh [DIR].
set -euo pipefail
dir=${1:-/tmp/corral-slurm}
for b in munged slurmctld slurmd sbatch; do
  command -v "$b" >/dev/null 2>&1 || {
    echo "slurm-up: $b not found; install slurmctld slurmd slurm-client munge (scripts/install-deps.sh --slurm)" >&2
    exit 1
  }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-up: run as root (slurmd runs jobs as their users)" >&2; exit 1; }
if [ -e "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
  echo "slurm-up: a Slurm already runs in $dir; stop it with scripts/slurm-down.sh $dir" >&2
  exit 1
fi
mkdir -p "$dir"
chmod 0700 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
# Ports away from Slurm's defaults, so a site's own Slurm is left alone.
ctldport=${SLURM_UP_CTLD_PORT:-16817}
port1=${SLURM_UP_NODE_PORT:-16818}
port2=$((port1 + 1))
host=$(hostname -s)

# munge: a fresh key and a private socket; --force because the key's
# parent directories (/tmp) are world-writable, which munged otherwise
# refuses.
[ -s "$dir/munge/munge.key" ] || {
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
}
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed"

cat >"$dir/slurm.conf" <<EOF
# Loopback Slurm for corral's differential checks (scripts/slurm-up.sh).
ClusterName=corral
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctldport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# Backfill every second (not 30 s), so a check sees its decisions at once.
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=1000
SlurmdParameters=config_overrides
ReturnToService=2
MaxJobCount=100000
MinJobAge=300
NodeName=dev1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port1 CPUs=2 RealMemory=4096 State=UNKNOWN
NodeName=dev2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port2 CPUs=2 RealMemory=4096 State=UNKNOWN
PartitionName=batch Nodes=dev[1-2] Default=YES MaxTime=INFINITE DefMemPerCPU=2048 State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

slurmctld -i -f "$SLURM_CONF"
for n in dev1 dev2; do
  slurmd -N "$n" -f "$SLURM_CONF"
done
# Ready when both nodes are idle.
for _ in $(seq 150); do
  if [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -eq 2 ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "slurm-up: the nodes did not come up in 30 s; logs in $dir/log:" >&2
tail -n 5 "$dir"/log/*.log >&2 || true
"$(dirname "$0")/slurm-down.sh" "$dir" >&2 || true
exit 1
