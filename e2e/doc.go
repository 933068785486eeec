// Package e2e runs whole corral clusters on this host — the real corral-ctld,
// corral-noded, corral-shim and corral binaries, real runc containers and
// cgroups — and checks the acceptance scenarios of each capability against
// them.
//
// The tests need root (containers and cgroups); they skip with that reason
// otherwise. Binaries are built into ../bin by TestMain (go build caches make
// this cheap when `make test` already built them).
package e2e
