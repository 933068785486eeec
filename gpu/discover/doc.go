// Package discover reads a node's GPUs through NVML (github.com/NVIDIA/go-nvml)
// into gpu.Device values: index, UUID, model name, memory, SM count, MIG
// mode and the MIG profiles with how many instances each can still have.
//
// libnvidia-ml is opened at run time, not linked: on a node without it (or
// where NVML will not initialize) Devices returns no devices and no error,
// after one log line. The same code reads the DGX A100 and DGX H100 mocks
// (Mock), built on go-nvml's moq mocks and GPU tables, for nodes and tests
// without GPUs.
//
// go-nvml needs cgo, so this package is for the node daemon; the pure
// accounting in package gpu has no such dependency.
package discover
