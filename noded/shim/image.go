package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/images"
)

// LayerDir in a job directory holds an image job's private writable
// overlay layer; the container removes it.
const LayerDir = "layer"

// imageOf is the container image of job, nil for the host view.
func imageOf(job *Job, dir string) *container.Image {
	if job.ImageRootfs == "" {
		return nil
	}
	return &container.Image{Lower: job.ImageRootfs, Layer: filepath.Join(dir, LayerDir)}
}

// withImageEnv adds the image's variables (its PATH, its library paths)
// that the job does not set itself.
func withImageEnv(env, image []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, kv := range image {
		if k, _, ok := strings.Cut(kv, "="); ok && !set[k] {
			env = append(env, kv)
			set[k] = true
		}
	}
	return env
}

// pullImage gives a job whose image noded did not hold its image: it
// pulls Launch.Image into the node's store (cancelled with the job) and
// says so on the job's stderr, so `corral log --err` shows where the
// time before the script went.
func pullImage(job *Job, ctl Controls, stderr io.Writer) error {
	cancel := ctl.Cancel
	ref := job.Launch.Image
	if ref == "" || job.ImageRootfs != "" {
		return nil
	}
	if job.ImageStore == "" {
		return fmt.Errorf("image %s: the node has no image store", ref)
	}
	st, err := images.Open(job.ImageStore)
	if err != nil {
		return err
	}
	st.MaxBytes, st.Registries = job.ImagePullMax, job.ImageRegistries
	im, err := st.Get(ref)
	if errors.Is(err, images.ErrNotFound) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go func() {
			select {
			case <-cancel:
				stop()
			case <-ctx.Done():
			}
		}()
		start := time.Now()
		fmt.Fprintf(stderr, "corral: image %s is not on node %s; pulling it\n", ref, job.Node)
		if ctl.Configuring != nil {
			ctl.Configuring("pulling image " + ref)
		}
		im, err = st.Pull(ctx, ref)
		if errors.Is(err, images.ErrTooBig) {
			return fmt.Errorf("image %s is not on node %s and is too big for a job to pull (%v; the node's --image-pull-max); an administrator can pull it with corral image pull", ref, job.Node, err)
		}
		if err != nil {
			return fmt.Errorf("image %s is not on node %s and pulling it failed: %v", ref, job.Node, err)
		}
		fmt.Fprintf(stderr, "corral: pulled %s in %.1fs\n", ref, time.Since(start).Seconds())
	}
	if err != nil {
		return err
	}
	job.ImageRootfs, job.ImageEnv = st.RootfsPath(im.ID), im.Env
	return nil
}
