package noded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/gpu/discover"
	"github.com/corral-hpc/corral/noded/mps"
	"github.com/corral-hpc/corral/noded/shim"
)

// This file is the node's side of fractional GPUs (docs/gpu.md): it finds
// the GPUs at start (NVML, or a go-nvml DGX mock), reports them, and for
// each launch turns the job's shares into what its container gets: a MIG
// instance per MIG share, the GPU's MPS control daemon for an MPS
// fraction, the environment (gpu.EnvFor plus the MPS pipe directory) and
// the device nodes of its GPUs alone (through CDI when the node has a CDI
// spec for them). A job's claim (its MIG instances and MPS GPU) is kept in
// its directory so that a restarted noded can release it.

// gpuClaimFile is a job's claim, beside launch.json.
const gpuClaimFile = "gpu.json"

// Defaults of the GPU settings.
const (
	DefaultGPUMockCount = 8
	DefaultMPSDir       = "/run/corral/mps"
)

// normalizeGPUs checks and fills the GPU settings.
func (c *Config) normalizeGPUs() error {
	switch {
	case c.GPUMock == "" && (c.GPUMockCount != 0 || len(c.GPUMockMIG) > 0):
		return errors.New("--gpu-mock-count and --gpu-mock-mig need --gpu-mock")
	case c.GPUMock != "" && !slices.Contains(discover.MockKinds(), c.GPUMock):
		return fmt.Errorf("--gpu-mock %q is unknown (valid: %s)", c.GPUMock, strings.Join(discover.MockKinds(), ", "))
	case c.GPUMock != "" && c.GPUMockCount == 0:
		c.GPUMockCount = DefaultGPUMockCount
	}
	if c.GPUMock != "" && (c.GPUMockCount < 1 || c.GPUMockCount > discover.MaxMockCount) {
		return fmt.Errorf("--gpu-mock-count %d must be between 1 and %d", c.GPUMockCount, discover.MaxMockCount)
	}
	if c.FGPUPerGPU != 0 {
		if err := gpu.CheckPerGPU(c.FGPUPerGPU); err != nil {
			return fmt.Errorf("--fgpu-per-gpu: %v", err)
		}
	}
	if c.MPSDir == "" {
		c.MPSDir = filepath.Join(DefaultMPSDir, c.Name)
	}
	if c.DevRoot == "" {
		c.DevRoot = "/dev"
	}
	if c.ProcRoot == "" {
		c.ProcRoot = "/proc"
	}
	return nil
}

// gpuNode is the node's GPUs; nil on a node without any.
type gpuNode struct {
	src  *discover.Source
	devs []gpu.Device
	mps  *mps.Supervisor // nil: no MPS control program
	cdi  *cdiDevices     // nil: no CDI spec names these GPUs
	cfg  *Config
	log  *log.Logger
}

// gpuClaim is what a job's GPUs took on the node, to give back at its end.
type gpuClaim struct {
	MIG []discover.MIGInstance `json:"mig,omitempty"`
	MPS string                 `json:"mps,omitempty"` // the GPU whose MPS daemon it uses
}

// newGPUNode discovers the GPUs. No GPUs (no NVML, no driver) is no error.
func newGPUNode(cfg *Config, logger *log.Logger) (*gpuNode, error) {
	var src *discover.Source
	if cfg.GPUMock != "" {
		var err error
		if src, err = discover.Mock(cfg.GPUMock, cfg.GPUMockCount, discover.WithMIG(cfg.GPUMockMIG...), discover.WithSeed(cfg.Name)); err != nil {
			return nil, fmt.Errorf("--gpu-mock: %w", err)
		}
	} else {
		src = discover.NVML()
		if cfg.NVMLPath != "" {
			src = discover.NVMLAt(cfg.NVMLPath)
		}
	}
	src.Logf = logger.Printf
	devs, err := src.Devices()
	if err != nil {
		logger.Printf("%v (these GPUs are left out)", err)
	}
	if len(devs) == 0 {
		return nil, nil
	}
	g := &gpuNode{src: src, devs: devs, cfg: cfg, log: logger}
	if needsMPS(devs) {
		control := cfg.MPSControl
		if control == "" {
			control = mps.DefaultControl
		}
		if g.mps, err = mps.New(control, cfg.MPSDir, logger.Printf); err != nil {
			if cfg.MPSControl != "" {
				return nil, fmt.Errorf("--mps-control: %w", err)
			}
			logger.Printf("gpu: no MPS (%v): fractions of GPUs not in MIG mode get their memory and SM limits from the job's environment only", err)
		}
	}
	if g.cdi, err = loadCDI(cfg.CDISpecDirs, devs); err != nil {
		logger.Printf("gpu: CDI specs: %v (device nodes are given directly)", err)
	}
	how := "device nodes directly"
	if g.cdi != nil {
		how = "CDI (" + strings.Join(g.cdi.dirs, ", ") + ")"
	}
	logger.Printf("gpu: %d GPUs from %s (%s), fgpu_per_gpu %s; devices through %s", len(devs), src, devs[0].Name, perGPUText(cfg.FGPUPerGPU), how)
	return g, nil
}

func needsMPS(devs []gpu.Device) bool {
	for _, d := range devs {
		if !d.MIGEnabled {
			return true
		}
	}
	return false
}

func perGPUText(h gpu.Hundredths) string {
	if h == 0 {
		return "from the controller"
	}
	return h.String()
}

// devices is what registration reports.
func (g *gpuNode) devices() []api.GPU {
	if g == nil {
		return nil
	}
	return gpu.DevicesAPI(g.devs)
}

// claim prepares a launch's shares: it creates MIG instances and starts
// MPS daemons as needed and returns the shim's GPU setup with the claim.
// On error nothing is left claimed.
func (g *gpuNode) claim(r *api.LaunchRequest) (setup *shim.GPUSetup, c *gpuClaim, err error) {
	if g == nil {
		return nil, nil, refuse(http.StatusBadRequest, "launch of job %d: it has GPU shares and this node has no GPUs", r.JobID)
	}
	perGPU := gpu.Hundredths(r.FGPUPerGPUHundredths)
	shares := gpu.SharesFromAPI(r.GPUs)
	// Check everything before creating anything: EnvFor checks devices,
	// amounts and MIG modes (a placeholder stands in for the instances).
	probe := slices.Clone(shares)
	for i := range probe {
		if probe[i].MIG != nil {
			probe[i].MIGDevice = "MIG-pending"
		}
	}
	if _, err := gpu.EnvFor(probe, g.devs, perGPU); err != nil {
		return nil, nil, refuse(http.StatusBadRequest, "launch of job %d: %v", r.JobID, err)
	}
	c = &gpuClaim{}
	defer func() {
		if err != nil {
			g.release(r.JobID, c)
			c = nil
		}
	}()
	for i := range shares {
		s := &shares[i]
		if s.MIG == nil {
			continue
		}
		m, err := g.src.CreateMIG(s.Device, s.MIG.ID)
		if err != nil {
			return nil, nil, refuse(http.StatusConflict, "launch of job %d: MIG %s instance: %v", r.JobID, s.MIG.Name, err)
		}
		c.MIG = append(c.MIG, m)
		s.MIGDevice = m.UUID
	}
	env, err := gpu.EnvFor(shares, g.devs, perGPU)
	if err != nil {
		return nil, nil, err
	}
	setup = &shim.GPUSetup{}
	for _, s := range shares {
		d, _ := gpu.Lookup(g.devs, s.Device)
		if s.MIG != nil || s.Amount >= perGPU || g.mps == nil {
			continue
		}
		client, err := g.mps.Acquire(d.UUID) // at most one fraction per job
		if err != nil {
			return nil, nil, fmt.Errorf("launch of job %d: %w", r.JobID, err)
		}
		c.MPS = d.UUID
		env = append(env, "CUDA_MPS_PIPE_DIRECTORY="+client.PipeDir)
		setup.Binds = append(setup.Binds, container.Bind{Source: client.PipeDir, Dest: client.PipeDir, Writable: true})
	}
	inject, err := g.inject(shares, c.MIG, r.UID, r.GID)
	if err != nil {
		return nil, nil, fmt.Errorf("launch of job %d: %w", r.JobID, err)
	}
	setup.Devices = inject.devices
	setup.Binds = append(setup.Binds, inject.binds...)
	setup.Env = mergeEnv(inject.env, env)
	return setup, c, nil
}

// mergeEnv is base with over's variables replacing base's of the same name.
func mergeEnv(base, over []string) []string {
	names := map[string]bool{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	var out []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

// release gives a claim back: MIG instances are destroyed, the MPS daemon
// loses a user. Failures are logged; a later start retries what is left in
// the job's directory.
func (g *gpuNode) release(id uint64, c *gpuClaim) {
	if g == nil || c == nil {
		return
	}
	for _, m := range c.MIG {
		if err := g.src.DestroyMIG(m); err != nil {
			g.log.Printf("job %d: %v", id, err)
		}
	}
	if c.MPS != "" && g.mps != nil {
		if err := g.mps.Release(c.MPS); err != nil {
			g.log.Printf("job %d: %v", id, err)
		}
	}
}

// writeClaim and readClaim keep a job's claim in its directory.
func writeClaim(dir string, c *gpuClaim) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return shim.WriteFileAtomic(filepath.Join(dir, gpuClaimFile), b, 0o600)
}

func readClaim(dir string) *gpuClaim {
	b, err := os.ReadFile(filepath.Join(dir, gpuClaimFile))
	if err != nil {
		return nil
	}
	var c gpuClaim
	if json.Unmarshal(b, &c) != nil {
		return nil
	}
	return &c
}

// recovered handles the claim of a job found at start: a job still running
// keeps its MIG instances and counts as a user of its MPS daemon; a job
// that ended gives its claim back.
func (g *gpuNode) recovered(id uint64, dir string, running bool) {
	c := readClaim(dir)
	if g == nil || c == nil {
		return
	}
	if !running {
		c.MPS = "" // this noded never counted it
		g.release(id, c)
		return
	}
	if c.MPS != "" && g.mps != nil {
		if err := g.mps.Adopt(c.MPS); err != nil {
			g.log.Printf("job %d: %v", id, err)
		}
	}
}

// mpsCheckInterval is how often running MPS daemons are checked.
const mpsCheckInterval = 10 * time.Second

// superviseMPS restarts MPS daemons that died while jobs use them, until
// ctx ends. Daemons outlive noded, as jobs do.
func (d *Daemon) superviseMPS(ctx context.Context) {
	if d.gpus == nil || d.gpus.mps == nil {
		return
	}
	t := time.NewTicker(mpsCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.gpus.mps.Check()
		}
	}
}

// claimGPUs prepares the GPUs of a launch that has shares, sets the
// shim's GPU setup and records the claim in the job's directory.
func (d *Daemon) claimGPUs(r *api.LaunchRequest, sj *shim.Job, dir string) (*gpuClaim, error) {
	if len(r.GPUs) == 0 {
		return nil, nil
	}
	setup, c, err := d.gpus.claim(r)
	if err != nil {
		return nil, err
	}
	if err := writeClaim(dir, c); err != nil {
		d.gpus.release(r.JobID, c)
		return nil, err
	}
	sj.GPU = setup
	return c, nil
}

// stopIdleMPS stops MPS daemons an earlier noded left without users.
func (g *gpuNode) stopIdleMPS() {
	if g != nil && g.mps != nil {
		g.mps.StopIdle()
	}
}
