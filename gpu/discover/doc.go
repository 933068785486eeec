// Package discover reads a node's GPUs through NVML (github.com/NVIDIA/go-nvml)
// into gpu.Device values: index, minor number, UUID, model name, memory, SM
// count, MIG mode and the MIG profiles with how many instances each can
// still have. It also makes and removes the MIG instances that serve
// shares on MIG-enabled devices (CreateMIG, DestroyMIG).
//
// libnvidia-ml is opened at run time, not linked: on a node without it (or
// where NVML will not initialize) Devices returns no devices and no error,
// after one log line. The same code reads go-nvml's DGX A100 and DGX H100
// mock servers (Mock), for nodes and tests without GPUs.
//
// go-nvml needs cgo, so this package is for the node daemon; the pure
// accounting in package gpu has no such dependency.
package discover
