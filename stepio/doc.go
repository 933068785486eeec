// Package stepio is the wire between srun and a node's step runner: small
// typed frames over one TCP connection per node, which the runner opens to
// srun's listening port (as slurmstepd connects back to srun).
//
// A frame is a 9-byte header, kind (1 byte), task rank (4 bytes, big
// endian; AllTasks for the whole node) and payload length (4 bytes), then
// the payload, at most MaxPayload bytes. The runner's first frame is
// Hello, carrying the step's I/O token; srun drops a connection whose
// first frame is anything else or a wrong token.
//
// Runner to srun: Hello, Stdout, Stderr, Exit (one per task), Done (the
// node's tasks have all ended; the runner closes after it). srun to
// runner: Stdin (an empty payload is end of input), Signal, Winsize.
//
// The package owns the encoding only; who reads and writes when belongs to
// srun (package cli) and the runner (package noded/shim).
//
// A step launched with --mpi=pmi2 adds Fence, FenceDone and Abort (pmi.go):
// the one cross-node part of the PMI server that the runners serve their
// tasks (package pmi), relayed through srun.
package stepio
