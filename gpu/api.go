package gpu

import "github.com/corral-hpc/corral/api"

// The api package mirrors Device, MIGProfile and Share so that it stays a
// leaf; these convert between the two, field for field.

// DeviceFromAPI converts a device as a node reported it.
func DeviceFromAPI(g api.GPU) Device {
	d := Device{
		Index: g.Index, Minor: g.Minor, UUID: g.UUID, Name: g.Name, MemoryBytes: g.MemoryBytes, SMs: g.SMs,
		MIGCapable: g.MIGCapable, MIGEnabled: g.MIGEnabled, MIGSlices: g.MIGSlices,
	}
	for _, p := range g.MIG {
		d.MIG = append(d.MIG, MIGProfile(p))
	}
	return d
}

// API converts d for the wire.
func (d Device) API() api.GPU {
	g := api.GPU{
		Index: d.Index, Minor: d.Minor, UUID: d.UUID, Name: d.Name, MemoryBytes: d.MemoryBytes, SMs: d.SMs,
		MIGCapable: d.MIGCapable, MIGEnabled: d.MIGEnabled, MIGSlices: d.MIGSlices,
	}
	for _, p := range d.MIG {
		g.MIG = append(g.MIG, api.MIGProfile(p))
	}
	return g
}

// DevicesFromAPI converts a node's devices.
func DevicesFromAPI(gs []api.GPU) []Device {
	var out []Device
	for _, g := range gs {
		out = append(out, DeviceFromAPI(g))
	}
	return out
}

// DevicesAPI converts devices for the wire.
func DevicesAPI(ds []Device) []api.GPU {
	var out []api.GPU
	for _, d := range ds {
		out = append(out, d.API())
	}
	return out
}

// ShareFromAPI converts a share from the wire.
func ShareFromAPI(s api.GPUShare) Share {
	out := Share{Device: s.Device, Amount: Hundredths(s.AmountHundredths), MIGDevice: s.MIGDevice}
	if s.MIG != nil {
		p := MIGProfile(*s.MIG)
		out.MIG = &p
	}
	return out
}

// API converts s for the wire.
func (s Share) API() api.GPUShare {
	out := api.GPUShare{Device: s.Device, AmountHundredths: int(s.Amount), MIGDevice: s.MIGDevice}
	if s.MIG != nil {
		p := api.MIGProfile(*s.MIG)
		out.MIG = &p
	}
	return out
}

// SharesFromAPI converts shares from the wire.
func SharesFromAPI(ss []api.GPUShare) []Share {
	var out []Share
	for _, s := range ss {
		out = append(out, ShareFromAPI(s))
	}
	return out
}

// SharesAPI converts shares for the wire.
func SharesAPI(ss []Share) []api.GPUShare {
	var out []api.GPUShare
	for _, s := range ss {
		out = append(out, s.API())
	}
	return out
}

// Total is what shares count against their devices, together.
func Total(ss []Share) Hundredths {
	var t Hundredths
	for _, s := range ss {
		t += s.Amount
	}
	return t
}

// Physical is how many physical GPUs a job holds on all its nodes
// (0.5 is half of one), for billing and accounting: each share's amount
// over its node's worth per GPU. Without shares on record (a run before a
// requeue, charged again after a restart) the request stands in, one
// fGPU per GPU.
func Physical(job *api.Job, nodes int) float64 {
	if len(job.GPUAlloc) == 0 {
		return float64(job.GPUs*max(nodes, 1)) + float64(job.FGPUHundredths*max(nodes, 1))/float64(One)
	}
	var g float64
	for _, a := range job.GPUAlloc {
		if a.FGPUPerGPUHundredths > 0 {
			g += float64(Total(SharesFromAPI(a.Shares))) / float64(a.FGPUPerGPUHundredths)
		}
	}
	return g
}
