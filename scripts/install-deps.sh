#!/usr/bin/env bash
# Installs the Debian packages corral's build and tests need, if missing.
# Safe to run repeatedly; does nothing when everything is present.
#   scripts/install-deps.sh [--slurm]
# --slurm also installs Slurm 22.05 and munge, which only the on-demand
# differential check against Slurm uses (scripts/slurm-diff.sh,
# scripts/slurm-speed.sh); no test needs them.
set -euo pipefail
slurm=0
for a in "$@"; do
  case "$a" in
    --slurm) slurm=1 ;;
    *) echo "install-deps: unknown option $a (use --slurm or nothing)" >&2; exit 2 ;;
  esac
done
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
[ -e /usr/include/stdio.h ] || need+=(libc6-dev)
[ -x /bin/busybox ] || need+=(busybox-static)
# corral-noded's seccomp support (go build -tags seccomp) links libseccomp.
[ -e /usr/include/seccomp.h ] || need+=(libseccomp-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
# The MPI launcher tests (e2e) build and run Open MPI and MPICH programs.
command -v mpirun.openmpi >/dev/null 2>&1 || need+=(openmpi-bin)
[ -n "$(find /usr/lib -path '*openmpi/include/mpi.h' -print -quit 2>/dev/null)" ] || need+=(libopenmpi-dev)
command -v mpiexec.hydra >/dev/null 2>&1 || need+=(mpich)
[ -n "$(find /usr/include -path '*mpich/mpi.h' -print -quit 2>/dev/null)" ] || need+=(libmpich-dev)
# The pipeline engine test (e2e TestSnakemake) drives Snakemake 7.21 over the Slurm names.
command -v snakemake >/dev/null 2>&1 || need+=(snakemake)
# The dashboard's browser tests drive Debian's Chromium; its terminal's
# front-end libraries come from npm; the app proxy test runs Jupyter.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v jupyter-notebook >/dev/null 2>&1 || need+=(jupyter-notebook)
if [ "$slurm" -eq 1 ]; then
  for p in slurmctld slurmd munge; do
    command -v "$p" >/dev/null 2>&1 || need+=("$p")
  done
  command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages ${need[*]}; run as root or install them" >&2
  exit 1
fi
echo "install-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
