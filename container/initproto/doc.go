// Package initproto is the contract between the shim and corral-init, the
// PID 1 of every job container: where things are mounted inside the
// container, what corral-init reports when the script ends, and how it
// starts a step's tasks on a runner's request (spawn.go). It depends on
// the standard library alone so that corral-init stays a small static
// binary.
package initproto
