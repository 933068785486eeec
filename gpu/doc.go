// Package gpu owns fractional GPUs (fGPU) as plain data and pure functions:
// the unit and its parsing, the per-device packing rule, the choice of a MIG
// profile for a share, and the limits and environment a job gets for its
// shares. Nothing here touches a device, a file or a clock, so the planner,
// the controller (built without cgo) and the node daemon share it.
//
// Amounts are integer hundredths of an fGPU (Hundredths, 0.01 quantum), the
// same scale as sched.Resources.FGPU. An admin sets how many fGPU one
// physical GPU is worth (fgpu_per_gpu, default 1); a device's capacity is
// that many fGPU. A share of s hundredths on a device worth p hundredths
// gets s/p of its memory and s/p of its SMs.
//
// Reading devices through NVML (and the DGX mocks) is package gpu/discover,
// which needs cgo. docs/gpu.md explains the model and its limits.
package gpu
