// Package mps runs NVIDIA MPS (Multi-Process Service) control daemons for
// the node daemon: one per GPU that jobs share by fractions, each with its
// own pipe and log directory, so that MPS's one-user-at-a-time rule holds
// per GPU rather than per node. A daemon starts on the first fractional
// use of its GPU (`nvidia-cuda-mps-control -d`), is restarted by Check if
// it dies while in use, and is told to quit when its last user is gone.
//
// The executable is a setting, so tests (and hosts without NVIDIA's
// tools) use a stand-in speaking the same little protocol: -d starts the
// daemon; without it, commands are read from standard input
// ("get_server_list", "quit").
package mps
