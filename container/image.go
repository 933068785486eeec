package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Image runs a container in an image's root file system instead of the
// read-only host view: an overlay with the image's unpacked tree as its
// shared read-only lower layer and a private upper layer per job, so the
// job may write anywhere and its writes vanish with it. The upper layer
// is a tmpfs of at most the job's memory limit, as its /tmp is (tmpMount):
// what the job writes over the image is memory charged to its own memory
// cgroup (overlayfs copies up and writes in the writer's context), never
// the node's disk, so a job cannot fill the disk by writing to /.
type Image struct {
	// Lower is the image's unpacked root file system (images.Store); it is
	// never written.
	Lower string
	// Layer is the job's own directory, where the tmpfs holding the
	// overlay's upper and work directories is mounted; Destroy unmounts
	// and removes it.
	Layer string
}

// overlayFlags keep set-id programs and device files in images inert.
const overlayFlags = unix.MS_NOSUID | unix.MS_NODEV

// mountImage mounts the overlay on rootfs, its upper layer on a tmpfs
// of memBytes (0: tmpfs's default, half the node's memory).
func mountImage(rootfs string, im *Image, memBytes int64) error {
	if !filepath.IsAbs(im.Lower) || !filepath.IsAbs(im.Layer) {
		return errors.New("image layers need absolute paths")
	}
	if st, err := os.Stat(im.Lower); err != nil || !st.IsDir() {
		return fmt.Errorf("image root file system %s is missing", im.Lower)
	}
	if err := os.Mkdir(im.Layer, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := unix.Mount("tmpfs", im.Layer, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpfsData("mode=700", memBytes)); err != nil {
		return fmt.Errorf("mounting the image's writable layer: %w", err)
	}
	upper, work := filepath.Join(im.Layer, "upper"), filepath.Join(im.Layer, "work")
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	for _, p := range []string{im.Lower, upper, work} {
		// overlayfs splits its options at ',' and ':'.
		if strings.ContainsAny(p, ",:") {
			return fmt.Errorf("image layer path %q contains ',' or ':'", p)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", im.Lower, upper, work)
	if err := unix.Mount("overlay", rootfs, "overlay", overlayFlags, opts); err != nil {
		return fmt.Errorf("mounting the image's overlay: %w", err)
	}
	return nil
}

// UnmountRoot undoes mountImage (or the host view's tmpfs, which a shim
// of an earlier corral mounted in the host's namespace): it detaches what is
// mounted on rootfs (if anything) and removes the job's layer directory
// (if layer is set). It is safe to call again after a crash.
func UnmountRoot(rootfs, layer string) error {
	if err := unix.Unmount(rootfs, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting the job's root at %s: %w", rootfs, err)
	}
	if layer == "" {
		return nil
	}
	if err := unix.Unmount(layer, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting the job's writable layer at %s: %w", layer, err)
	}
	return RemoveTree(layer)
}
