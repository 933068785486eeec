package container

import (
	"fmt"
	"os"

	devcfg "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// Device is a host device node a job may use (a GPU): it is created at
// Path in the container's own /dev and allowed, alone, in the job's
// device cgroup. Every other host device stays out of reach.
type Device struct {
	Path     string      `json:"path"` // in the container: /dev/nvidia0
	Type     byte        `json:"type"` // 'c' or 'b'
	Major    int64       `json:"major"`
	Minor    int64       `json:"minor"`
	FileMode os.FileMode `json:"file_mode"`
	UID      uint32      `json:"uid,omitempty"`
	GID      uint32      `json:"gid,omitempty"`
	// Perms is the cgroup access, "rwm" when empty.
	Perms string `json:"perms,omitempty"`
}

// HostDevice describes the device node at hostPath, to appear at path in
// the container with the same numbers and mode.
func HostDevice(hostPath, path string) (Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(hostPath, &st); err != nil {
		return Device{}, fmt.Errorf("device %s: %w", hostPath, err)
	}
	var typ byte
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		typ = 'c'
	case unix.S_IFBLK:
		typ = 'b'
	default:
		return Device{}, fmt.Errorf("%s is not a device node", hostPath)
	}
	return Device{
		Path: path, Type: typ,
		Major: int64(unix.Major(uint64(st.Rdev))), Minor: int64(unix.Minor(uint64(st.Rdev))),
		FileMode: os.FileMode(st.Mode & 0o777), UID: st.Uid, GID: st.Gid,
	}, nil
}

func (d Device) config() *devcfg.Device {
	perms := d.Perms
	if perms == "" {
		perms = "rwm"
	}
	return &devcfg.Device{
		Rule: devcfg.Rule{Type: devcfg.Type(d.Type), Major: d.Major, Minor: d.Minor,
			Permissions: devcfg.Permissions(perms), Allow: true},
		Path: d.Path, FileMode: d.FileMode, Uid: d.UID, Gid: d.GID,
	}
}

// checkDevices refuses device entries libcontainer would trip over.
func checkDevices(devs []Device) error {
	for _, d := range devs {
		if d.Type != 'c' && d.Type != 'b' || len(d.Path) < 6 || d.Path[:5] != "/dev/" {
			return fmt.Errorf("device %+v: want a char or block device under /dev", d)
		}
	}
	return nil
}
