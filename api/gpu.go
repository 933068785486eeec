package api

// This file holds the wire types of fractional GPUs (docs/gpu.md): the
// devices a node reports, the shares a job holds and what `corral nodes
// --gpus` lists. Amounts of fGPU are integer hundredths (0.5 fGPU is 50),
// as in package gpu, whose Device and Share these types mirror field for
// field (gpu converts; api stays a leaf package).

// GPU is one physical GPU of a node as its node daemon discovered it.
type GPU struct {
	Index       int    `json:"index"` // NVML index on the node
	Minor       int    `json:"minor"` // /dev/nvidia<minor>
	UUID        string `json:"uuid"`
	Name        string `json:"name"` // the model: "NVIDIA A100-SXM4-40GB"
	MemoryBytes int64  `json:"memory_bytes"`
	SMs         int    `json:"sms,omitempty"`
	MIGCapable  bool   `json:"mig_capable,omitempty"`
	// MIGEnabled devices serve every share with a MIG instance.
	MIGEnabled bool         `json:"mig_enabled,omitempty"`
	MIGSlices  int          `json:"mig_slices,omitempty"`
	MIG        []MIGProfile `json:"mig,omitempty"`
}

// MIGProfile is one GPU-instance profile of a MIG-capable device.
type MIGProfile struct {
	ID          int    `json:"id"`
	Name        string `json:"name"` // "1g.5gb"
	Slices      int    `json:"slices"`
	SMs         int    `json:"sms"`
	MemoryBytes int64  `json:"memory_bytes"`
	MemEighths  int    `json:"mem_eighths"`
	Variant     string `json:"variant,omitempty"`
	Max         int    `json:"max"`
	Free        int    `json:"free"`
}

// GPUShare is the part of one device a job holds.
type GPUShare struct {
	Device int `json:"device"` // GPU.Index
	// AmountHundredths counts against the device; a whole device is
	// worth the node's fgpu_per_gpu.
	AmountHundredths int         `json:"amount_hundredths"`
	MIG              *MIGProfile `json:"mig,omitempty"`
	// MIGDevice is the MIG instance's UUID, known once the node made it.
	MIGDevice string `json:"mig_device,omitempty"`
}

// NodeGPUs is what a job holds on one node.
type NodeGPUs struct {
	Node   string     `json:"node"`
	Shares []GPUShare `json:"shares"`
	// FGPUPerGPUHundredths is what one whole device of the node is worth.
	FGPUPerGPUHundredths int `json:"fgpu_per_gpu_hundredths"`
}

// NodeGPU is one device of a node with what is allocated on it.
type NodeGPU struct {
	GPU
	AllocHundredths int      `json:"alloc_hundredths"`
	Jobs            []uint64 `json:"jobs,omitempty"` // jobs holding a share of it
}
