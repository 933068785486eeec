package noded

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/gpu"
)

// Config is everything a Daemon needs. Zero values get the defaults below
// from Normalize.
type Config struct {
	Name      string // node name; default: hostname
	CtldURL   string // e.g. http://127.0.0.1:6817 (required)
	Listen    string // default :6818
	Advertise string // host:port (or URL) ctld reaches us at; default from Listen
	Key       []byte // cluster key (required)
	StateDir  string // default /var/lib/corral/noded/<name>
	// CPUs is the number of CPUs offered; more than the host's cores
	// oversubscribes them (logical CPU i runs on core i mod cores).
	CPUs     int
	MemBytes int64
	KillWait time.Duration // grace between SIGTERM and SIGKILL; default 30s
	MaxPids  int64         // per job; default 4096
	// InitPath is corral-init; default: beside the running executable.
	InitPath string
	// ShimCommand runs a shim with the job directory appended; default:
	// corral-shim beside the running executable. The shim is its own small
	// binary because libcontainer re-executes it as every container's
	// init: each job pays for two starts of it (see cmd/corral-shim).
	ShimCommand []string
	// SpareShim keeps one shim started ahead of the next launch, which
	// then need not wait for its start-up (spareshim.go). The shim
	// command must take shim.SpareArg (corral-shim does).
	SpareShim bool
	// Hide lists more host paths masked inside job containers (the cluster
	// key file); the state directory is always masked.
	Hide []string
	// ImageStore is the node's image store (package images); default
	// DefaultImageStore. It is shared by every noded on the host.
	ImageStore string
	// ImagePullMax bounds the unpacked size of an image a job's
	// --container-image makes the node pull (images.Store.MaxBytes);
	// default DefaultImagePullMax. An administrator's own pulls and
	// imports are not bounded.
	ImagePullMax int64
	// ImageRegistries are the registries images may be pulled from; the
	// first serves references that name none (images.Store.Registries).
	// None: only loopback registries, and a name without one is refused.
	ImageRegistries []string
	// MountRoots are the host directories under which users may --mount
	// (checked as the user); none: --mount is refused.
	MountRoots []string

	// GPUs (gpus.go). GPUMock reads a go-nvml DGX mock ("dgxa100",
	// "dgxh100") of GPUMockCount devices, those in GPUMockMIG in MIG
	// mode, instead of NVML (NVMLPath, default libnvidia-ml.so.1).
	GPUMock      string
	GPUMockCount int
	GPUMockMIG   []int
	NVMLPath     string
	// FGPUPerGPU is what one of the node's GPUs is worth in fGPU
	// (--fgpu-per-gpu); 0 leaves it to the controller.
	FGPUPerGPU gpu.Hundredths
	// MPSControl is the MPS control program (default
	// nvidia-cuda-mps-control on PATH); MPSDir holds each GPU's pipe and
	// log directories (default /run/corral/mps/<name>).
	MPSControl string
	MPSDir     string
	// CDISpecDirs are searched for CDI specs (default /etc/cdi and
	// /var/run/cdi). DevRoot and ProcRoot are where device nodes and the
	// driver's capability files are read (default /dev and /proc).
	CDISpecDirs       []string
	DevRoot, ProcRoot string

	// CredSocket is the Unix socket where local users get a remote
	// credential for their uid (credsock.go); "" offers none.
	CredSocket string
	// CAFile is the cluster CA (ctld's ca.pem) pinned for an https
	// CtldURL (tls.go); required then.
	CAFile string
}

// Defaults.
const (
	DefaultListen   = ":6818"
	DefaultKillWait = 30 * time.Second
	DefaultMaxPids  = 4096
	DefaultStateDir = "/var/lib/corral/noded"
	DefaultKeyFile  = "/etc/corral/cluster.key"
	// ReservedMem is kept back from the host's memory by default.
	ReservedMem = 512 << 20
)

var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Normalize fills defaults and validates; the error is one clear sentence.
func (c *Config) Normalize() error {
	if c.Name == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("no --name given and no hostname: %w", err)
		}
		c.Name = strings.SplitN(h, ".", 2)[0]
	}
	if !nodeName.MatchString(c.Name) {
		return fmt.Errorf("node name %q is invalid: use letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)", c.Name)
	}
	if c.CtldURL == "" {
		return errors.New("--ctld is required (the controller's node-plane URL, e.g. http://127.0.0.1:6817)")
	}
	u, err := url.Parse(c.CtldURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--ctld %q is not an http(s)://host:port URL", c.CtldURL)
	}
	c.CtldURL = strings.TrimRight(c.CtldURL, "/")
	if len(c.Key) == 0 {
		return errors.New("no cluster key")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(DefaultStateDir, c.Name)
	}
	if !filepath.IsAbs(c.StateDir) {
		abs, err := filepath.Abs(c.StateDir)
		if err != nil {
			return err
		}
		c.StateDir = abs
	}
	if c.CPUs == 0 {
		c.CPUs = len(HostCores())
	}
	if c.CPUs < 0 {
		return fmt.Errorf("--cpus %d must be positive", c.CPUs)
	}
	if c.MemBytes == 0 {
		c.MemBytes = DefaultMem()
	}
	if c.MemBytes < 0 {
		return fmt.Errorf("--mem must be positive")
	}
	if c.KillWait == 0 {
		c.KillWait = DefaultKillWait
	}
	if c.KillWait < 0 {
		return fmt.Errorf("--kill-wait %s must not be negative", c.KillWait)
	}
	if c.MaxPids == 0 {
		c.MaxPids = DefaultMaxPids
	}
	if c.MaxPids < 8 {
		return fmt.Errorf("--max-pids %d is too small for a shell script (at least 8)", c.MaxPids)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if c.InitPath == "" {
		c.InitPath = filepath.Join(filepath.Dir(exe), "corral-init")
	}
	if err := checkInit(c.InitPath); err != nil {
		return err
	}
	if err := c.normalizeEnvironments(); err != nil {
		return err
	}
	if err := c.normalizeGPUs(); err != nil { // gpus.go
		return err
	}
	if len(c.ShimCommand) == 0 {
		c.ShimCommand = []string{filepath.Join(filepath.Dir(exe), "corral-shim")}
	}
	if st, err := os.Stat(c.ShimCommand[0]); err != nil || !st.Mode().IsRegular() || st.Mode()&0o100 == 0 {
		return fmt.Errorf("corral-shim not found at %s, or not executable (build it with go build -tags seccomp ./cmd/corral-shim, or pass --shim-path)", c.ShimCommand[0])
	}
	return nil
}

func checkInit(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("corral-init not found at %s (build it with CGO_ENABLED=0 go build ./cmd/corral-init, or pass --init-path)", path)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o001 == 0 {
		return fmt.Errorf("corral-init at %s must be a file everyone may execute (chmod 755)", path)
	}
	return nil
}

// HostCores lists the CPUs in this process's affinity mask.
func HostCores() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return []int{0}
	}
	var cores []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cores = append(cores, i)
		}
	}
	if len(cores) == 0 {
		return []int{0}
	}
	return cores
}

// DefaultMem is physical memory minus ReservedMem.
func DefaultMem() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 1 << 30
	}
	total := int64(si.Totalram) * int64(si.Unit)
	if total <= 2*ReservedMem {
		return total / 2
	}
	return total - ReservedMem
}
