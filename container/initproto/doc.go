// Package initproto is the contract between the shim and corral-init, the
// PID 1 of every job container: where things are mounted inside the
// container and what corral-init reports when the script ends. It has no
// dependencies so that corral-init stays a small static binary.
package initproto
