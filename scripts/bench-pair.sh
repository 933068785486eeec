#!/bin/sh
# bench-pair.sh REF PKG REGEX ROUNDS [BENCHTIME]
#
# Runs the Go benchmarks matching REGEX of package PKG (./ctld) on commit REF
# and on the working tree, alternately, ROUNDS times each, so that both see
# the same machine load; prints one line per run: which build, then the
# benchmark's result line. Test binaries are built once per side
# (go test -c -tags seccomp) and run from the package's directory, as
# go test runs them. Example (issue 12's submit-path parity):
#
#   scripts/bench-pair.sh be4c439 ./ctld 'BenchmarkSubmitParallel$' 6 20000x
set -eu
[ $# -ge 4 ] || { echo "usage: $0 REF PKG REGEX ROUNDS [BENCHTIME]" >&2; exit 2; }
ref=$1 pkg=$2 regex=$3 rounds=$4 benchtime=${5:-1s}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/base" "$ref" >/dev/null 2>&1
(cd "$tmp/base" && go test -c -tags seccomp -o "$tmp/base.test" "$pkg")
(cd "$root" && go test -c -tags seccomp -o "$tmp/head.test" "$pkg")
dir=$root/${pkg#./}
i=0
while [ "$i" -lt "$rounds" ]; do
	for side in base head; do
		(cd "$dir" && "$tmp/$side.test" -test.run '^$' -test.bench "$regex" -test.benchtime "$benchtime") |
			grep '^Benchmark' | sed "s/^/$side /"
	done
	i=$((i + 1))
done
