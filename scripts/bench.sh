#!/usr/bin/env bash
# make bench: every benchmark behind docs/benchmarks.md, with the counts the
# issues ask for, built as make builds (-tags seccomp). Prints go test's
# benchmark lines; record them with the command in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "\$ go test -tags seccomp $*"; go test -tags seccomp "$@" | grep -E '^(Benchmark|ok|FAIL|---)' ; }
run -run '^$' -bench 'BenchmarkSubmitCLI$' -benchtime 1000x ./e2e/
run -run '^$' -bench 'BenchmarkSubmitThroughput$' -benchtime 20000x ./e2e/
run -run '^$' -bench 'BenchmarkEndToEnd$' -benchtime 500x -timeout 20m ./e2e/
run -run '^$' -bench 'BenchmarkPendingToRunning$' -benchtime 30x ./e2e/
run -run '^$' -bench 'BenchmarkSrunOutsideAllocation$' -benchtime 20x ./e2e/
run -run '^$' -bench 'BenchmarkLoad100k$' -benchtime 3x -timeout 20m ./e2e/
run -run '^$' -bench 'BenchmarkCheck100k$' -benchtime 3x ./ctld/store/
run -run '^$' -bench . -benchtime 3x ./sched/
run -run '^$' -bench . ./ctld/...
# Issue 14: sbatch and squeue, whole processes, side by side with a
# loopback Slurm 22.05 (scripts/install-deps.sh --slurm); without one the
# comparison is skipped, and says so.
if command -v slurmctld >/dev/null && [ -x /usr/bin/sbatch ]; then
  echo '$ scripts/slurm-speed.sh 60 300'
  scripts/slurm-speed.sh 60 300
else
  echo 'scripts/slurm-speed.sh: skipped: no Slurm here (scripts/install-deps.sh --slurm installs it)'
fi
