package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opencontainers/cgroups"
	_ "github.com/opencontainers/cgroups/devices"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"golang.org/x/sys/unix"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		libcontainer.Init()
	}
}

func main() {
	base := os.Args[1]
	rootfs := filepath.Join(base, "rootfs")
	os.MkdirAll(rootfs, 0o755)
	var mounts []*configs.Mount
	ents, _ := os.ReadDir("/")
	for _, e := range ents {
		n := e.Name()
		switch n {
		case "proc", "sys", "dev", "tmp":
			continue
		}
		p := "/" + n
		if e.Type()&os.ModeSymlink != 0 {
			t, _ := os.Readlink(p)
			os.Symlink(t, filepath.Join(rootfs, n))
			continue
		}
		mounts = append(mounts, &configs.Mount{Source: p, Destination: p, Device: "bind",
			Flags: unix.MS_BIND | unix.MS_REC, RecAttr: &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}})
	}
	const dflt = unix.MS_NOEXEC | unix.MS_NOSUID | unix.MS_NODEV
	mounts = append(mounts,
		&configs.Mount{Source: "proc", Destination: "/proc", Device: "proc", Flags: dflt},
		&configs.Mount{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755"},
		&configs.Mount{Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620,gid=5"},
		&configs.Mount{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: dflt, Data: "mode=1777,size=65536k"},
		&configs.Mount{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: dflt},
		&configs.Mount{Source: "/sys", Destination: "/sys", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC, RecAttr: &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}},
		&configs.Mount{Source: "cgroup", Destination: "/sys/fs/cgroup", Device: "cgroup", Flags: dflt | unix.MS_RDONLY},
		&configs.Mount{Source: filepath.Join(base, "tmp"), Destination: "/tmp", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC},
	)
	os.MkdirAll(filepath.Join(base, "tmp"), 0o1777)
	var devs []*devcfg.Rule
	for _, d := range specconv.AllowedDevices {
		devs = append(devs, &d.Rule)
	}
	cfg := &configs.Config{
		Rootfs:     rootfs,
		Readonlyfs: true,
		Namespaces: configs.Namespaces{{Type: configs.NEWNS}, {Type: configs.NEWUTS}, {Type: configs.NEWIPC}, {Type: configs.NEWPID}, {Type: configs.NEWCGROUP}},
		Cgroups: &cgroups.Cgroup{Path: "corral-spike", Resources: &cgroups.Resources{
			Devices: devs, Memory: 256 << 20, CpuQuota: 100000, CpuPeriod: 100000, CpusetCpus: "1", PidsLimit: ptr(int64(100)),
		}},
		Devices:         specconv.AllowedDevices,
		Hostname:        "spike",
		Mounts:          mounts,
		NoNewPrivileges: true,
		Capabilities:    &configs.Capabilities{},
		MaskPaths:       []string{"/proc/kcore", "/sys/firmware"},
		ReadonlyPaths:   []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"},
	}
	c, err := libcontainer.Create(filepath.Join(base, "runc"), "spike", cfg)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	p := &libcontainer.Process{Args: []string{"/bin/sh", "-c", os.Args[2]}, Env: []string{"PATH=/usr/bin:/bin"}, UID: 65534, GID: 65534, AdditionalGroups: []int{100}, Cwd: "/",
		Stdin: nil, Stdout: os.Stdout, Stderr: os.Stderr, Init: true}
	if err := c.Run(p); err != nil {
		fmt.Println("run:", err)
		c.Destroy()
		os.Exit(1)
	}
	st, err := p.Wait()
	fmt.Println("wait:", st, err)
	s, err := c.Stats()
	if err == nil {
		fmt.Println("peak", s.CgroupStats.MemoryStats.Usage.MaxUsage, "cpu", s.CgroupStats.CpuStats.CpuUsage.TotalUsage)
	}
	fmt.Println("destroy:", c.Destroy())
}

func ptr[T any](v T) *T { return &v }
