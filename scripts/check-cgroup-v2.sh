#!/usr/bin/env bash
# Runs corral's cgroup, container, shim and noded tests for real on a host
# with the pure cgroup v2 (unified) hierarchy. On any other host it says so
# and exits 2 without testing anything.
#
# Each test binary runs alone in a fresh cgroup: on v2, noded (and these
# tests) move themselves into a leaf and enable controllers in the cgroup
# they started in, which the no-internal-processes rule only allows when
# nothing else lives there.
#
# On a host without Go, build the test binaries elsewhere (same Linux
# architecture) and point CORRAL_V2_TESTS at them, named as this script
# names them (cgroup.test, container.test, noded_shim.test, noded.test,
# cmd_corral-noded.test, cmd_corral-shim.test):
#   for p in cgroup container noded/shim noded cmd/corral-noded cmd/corral-shim; do
#     go test -c -o DIR/$(echo $p | tr / _).test ./$p; done
#   for b in corral-init corral-noded corral-shim; do go build -o DIR/$b ./cmd/$b; done
#   CGO_ENABLED=0 go build -o DIR/initattack ./noded/shim/testdata/initattack
#   CORRAL_V2_TESTS=DIR scripts/check-cgroup-v2.sh
# (the tests then take the binaries they would build from DIR too).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" -eq 0 ] || { echo "check-cgroup-v2: run as root (the tests create containers and cgroups)" >&2; exit 1; }
root=/sys/fs/cgroup
fstype=$(stat -fc %T "$root" 2>/dev/null || echo missing)
if [ "$fstype" != cgroup2fs ]; then
  echo "check-cgroup-v2: this host is NOT pure cgroup v2: $root is '$fstype' (v1 or hybrid). Nothing was tested." >&2
  exit 2
fi
for c in memory cpu pids; do
  grep -qw "$c" "$root/cgroup.controllers" || { echo "check-cgroup-v2: controller $c is not available at $root" >&2; exit 1; }
done

tmp=$(mktemp -d)
parent="$root/corral-v2-check.$$"
cleanup() {
  # Children first: test leaves, per-binary cgroups, then the parent.
  if [ -d "$parent" ]; then
    find "$parent" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

pkgs=(cgroup container noded/shim noded cmd/corral-noded cmd/corral-shim)
if [ -n "${CORRAL_V2_TESTS:-}" ]; then
  export CORRAL_TEST_BINS=$CORRAL_V2_TESTS
  for p in "${pkgs[@]}"; do
    name=$(echo "$p" | tr / _).test
    [ -x "$CORRAL_V2_TESTS/$name" ] || { echo "check-cgroup-v2: $CORRAL_V2_TESTS/$name is missing" >&2; exit 1; }
    cp "$CORRAL_V2_TESTS/$name" "$tmp/$name"
  done
else
  for p in "${pkgs[@]}"; do
    go test -c -o "$tmp/$(echo "$p" | tr / _).test" "./$p"
  done
fi

enable="+cpu +memory +pids"
grep -qw cpuset "$root/cgroup.controllers" && enable="$enable +cpuset"
echo "$enable" > "$root/cgroup.subtree_control"
mkdir "$parent"
echo "$enable" > "$parent/cgroup.subtree_control"

status=0
for p in "${pkgs[@]}"; do
  name=$(echo "$p" | tr / _)
  sub="$parent/$name"
  mkdir "$sub"
  echo "== $p (in ${sub#$root})"
  # Move this subshell into the fresh cgroup, then become the test binary.
  if ! (cd "$p" && sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -test.count=1' _ "$sub" "$tmp/$name.test"); then
    status=1
  fi
done
if [ $status -eq 0 ]; then
  echo "check-cgroup-v2: all tests passed on cgroup v2"
else
  echo "check-cgroup-v2: FAILURES on cgroup v2" >&2
fi
exit $status
