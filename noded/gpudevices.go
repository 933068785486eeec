package noded

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/gpu/discover"
)

// cdiKind is the CDI vendor and class nvidia-ctk names GPUs with.
const cdiKind = "nvidia.com/gpu"

// injection is what a job's container gets for its GPUs.
type injection struct {
	devices []container.Device
	binds   []container.Bind
	env     []string // from CDI; the job's GPU variables override them
}

// inject gives a job's container its GPUs and nothing more: through CDI
// when a CDI spec names every one of them, else as device nodes.
func (g *gpuNode) inject(shares []gpu.Share, migs []discover.MIGInstance, uid, gid uint32) (injection, error) {
	if g.cdi != nil {
		if names, ok := g.cdi.names(shares, g.devs); ok {
			return g.cdi.inject(names, uid, gid)
		}
	}
	devs, err := g.deviceNodes(shares, migs)
	return injection{devices: devs}, err
}

// deviceNodes lists the host device nodes a job with these shares needs:
// the driver's control nodes, /dev/nvidia<minor> of each of its GPUs and,
// for MIG instances, their GPU and compute instance capability nodes.
// Nodes the host does not have are left out: a mock node has none, and a
// driver without UVM has no nvidia-uvm.
func (g *gpuNode) deviceNodes(shares []gpu.Share, migs []discover.MIGInstance) ([]container.Device, error) {
	rel := []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}
	for _, s := range shares {
		d, _ := gpu.Lookup(g.devs, s.Device)
		rel = append(rel, "nvidia"+strconv.Itoa(d.Minor))
	}
	for _, m := range migs {
		d, _ := gpu.Lookup(g.devs, m.Device)
		base := filepath.Join(g.cfg.ProcRoot, "driver/nvidia/capabilities", "gpu"+strconv.Itoa(d.Minor), "mig",
			"gi"+strconv.Itoa(m.GI))
		for _, f := range []string{filepath.Join(base, "access"), filepath.Join(base, "ci"+strconv.Itoa(m.CI), "access")} {
			if minor, ok := capMinor(f); ok {
				rel = append(rel, "nvidia-caps/nvidia-cap"+strconv.Itoa(minor))
			}
		}
	}
	var out []container.Device
	for _, r := range rel {
		dev, err := container.HostDevice(filepath.Join(g.cfg.DevRoot, r), "/dev/"+r)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, dev)
	}
	return out, nil
}

// capMinor reads "DeviceFileMinor: N" from a driver capability file.
func capMinor(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "DeviceFileMinor:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	return 0, false
}

// cdiDevices is the node's CDI specs for its GPUs.
type cdiDevices struct {
	cache *cdi.Cache
	dirs  []string
}

// loadCDI reads the CDI spec directories (default /etc/cdi and
// /var/run/cdi); nil when no spec names a GPU.
func loadCDI(dirs []string, devs []gpu.Device) (*cdiDevices, error) {
	if len(dirs) == 0 {
		dirs = cdi.DefaultSpecDirs
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dirs...), cdi.WithAutoRefresh(false))
	if err != nil {
		return nil, err
	}
	found := slices.ContainsFunc(cache.ListDevices(), func(n string) bool { return strings.HasPrefix(n, cdiKind+"=") })
	var errs []error
	for path, es := range cache.GetErrors() {
		errs = append(errs, fmt.Errorf("%s: %v", path, errors.Join(es...)))
	}
	err = errors.Join(errs...)
	if err != nil {
		err = errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if !found {
		return nil, err
	}
	return &cdiDevices{cache: cache, dirs: dirs}, err
}

// names are the CDI devices of the shares: a GPU by UUID or index (the
// names `nvidia-ctk cdi generate` writes), a MIG instance by its UUID. ok
// is false when some share has no CDI device.
func (c *cdiDevices) names(shares []gpu.Share, devs []gpu.Device) ([]string, bool) {
	var out []string
	for _, s := range shares {
		d, _ := gpu.Lookup(devs, s.Device)
		cands := []string{d.UUID, strconv.Itoa(d.Index)}
		if s.MIG != nil {
			cands = []string{s.MIGDevice}
		}
		found := false
		for _, n := range cands {
			if q := cdiKind + "=" + n; c.cache.GetDevice(q) != nil {
				out, found = append(out, q), true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// inject applies the devices' CDI edits to an empty OCI spec and takes
// what corral's containers use from it: device nodes (and their cgroup
// rules), bind mounts and environment. Hooks are not run: the job sees
// the host's libraries and their ld.so.cache as they are.
func (c *cdiDevices) inject(names []string, uid, gid uint32) (injection, error) {
	spec := &oci.Spec{Process: &oci.Process{User: oci.User{UID: uid, GID: gid}}, Linux: &oci.Linux{}}
	if _, err := c.cache.InjectDevices(spec, names...); err != nil {
		return injection{}, fmt.Errorf("CDI: %v", err)
	}
	var out injection
	for _, d := range spec.Linux.Devices {
		if len(d.Type) != 1 {
			continue
		}
		dev := container.Device{Path: d.Path, Type: d.Type[0], Major: d.Major, Minor: d.Minor, FileMode: 0o666}
		if d.FileMode != nil {
			dev.FileMode = *d.FileMode
		}
		if d.UID != nil {
			dev.UID = *d.UID
		}
		if d.GID != nil {
			dev.GID = *d.GID
		}
		out.devices = append(out.devices, dev)
	}
	for _, m := range spec.Mounts {
		if m.Type != "bind" && !slices.Contains(m.Options, "bind") && !slices.Contains(m.Options, "rbind") {
			continue
		}
		out.binds = append(out.binds, container.Bind{Source: m.Source, Dest: m.Destination, Writable: !slices.Contains(m.Options, "ro")})
	}
	out.env = spec.Process.Env
	return out, nil
}
