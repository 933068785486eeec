package noded

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/noded/shim"
)

// DefaultImageStore is where images live unless --image-store says.
const DefaultImageStore = "/var/lib/corral/images"

// DefaultImagePullMax is the largest image a job may make a node pull,
// unpacked, unless --image-pull-max says: above the biggest common HPC
// images (CUDA with a framework is 10 to 20 GiB), far below a node disk.
const DefaultImagePullMax = 32 << 30

// normalizeEnvironments checks the image store and mount roots.
func (c *Config) normalizeEnvironments() error {
	if c.ImageStore == "" {
		c.ImageStore = DefaultImageStore
	}
	if !filepath.IsAbs(c.ImageStore) {
		return fmt.Errorf("--image-store %q must be an absolute path", c.ImageStore)
	}
	switch {
	case c.ImagePullMax == 0:
		c.ImagePullMax = DefaultImagePullMax
	case c.ImagePullMax < 0:
		return fmt.Errorf("--image-pull-max %d must be positive", c.ImagePullMax)
	}
	for _, h := range c.ImageRegistries {
		if err := images.CheckRegistry(h); err != nil {
			return err
		}
	}
	for i, r := range c.MountRoots {
		if !filepath.IsAbs(r) || strings.ContainsRune(r, 0) {
			return fmt.Errorf("--mount-root %q must be an absolute path", r)
		}
		c.MountRoots[i] = filepath.Clean(r)
		if c.MountRoots[i] == "/" {
			return errors.New("--mount-root / would let users mount the whole host; name the data directories instead")
		}
	}
	return nil
}

// images opens the store (creating it on first use), pulling only from
// the configured registries.
func (d *Daemon) images() (*images.Store, error) {
	st, err := images.Open(d.cfg.ImageStore)
	if err == nil {
		st.Registries = d.cfg.ImageRegistries
	}
	return st, err
}

// prepareEnvironment resolves the launch's image to its unpacked root
// file system (an image the node lacks is pulled by the shim) and passes
// the mount roots on to the shim, which checks the mounts as the user.
func (d *Daemon) prepareEnvironment(r *api.LaunchRequest, sj *shim.Job) error {
	sj.MountRoots = d.cfg.MountRoots
	if len(r.Mounts) > 0 && len(d.cfg.MountRoots) == 0 {
		return refuseJob("launch of job %d: node %s allows no --mount (no --mount-root)", r.JobID, d.cfg.Name)
	}
	if r.Image == "" {
		return nil
	}
	st, err := d.images()
	if err != nil {
		return err
	}
	sj.ImageStore, sj.ImagePullMax = d.cfg.ImageStore, d.cfg.ImagePullMax
	sj.ImageRegistries = d.cfg.ImageRegistries
	im, err := st.Get(r.Image)
	if errors.Is(err, images.ErrNotFound) {
		// The shim pulls it (slow work stays out of the launch call), if
		// its registry is one this node pulls from: decided here, with
		// no lookup, so a refused image fails the job at once.
		if err := st.CheckPull(r.Image); err != nil {
			return refuseJob("launch of job %d on node %s: %v", r.JobID, d.cfg.Name, err)
		}
		return nil
	}
	if err != nil {
		if _, lerr := st.List(); lerr == nil {
			// The store reads fine: the reference is what is wrong (an
			// ambiguous ID prefix), and the user chose it.
			return refuseJob("launch of job %d: --container-image %s on node %s: %v", r.JobID, r.Image, d.cfg.Name, err)
		}
		return err
	}
	sj.ImageRootfs, sj.ImageEnv = st.RootfsPath(im.ID), im.Env
	return nil
}

// ---- node plane: image commands (ctld -> noded) ----

// handleImages lists the node's images.
func (d *Daemon) handleImages(w http.ResponseWriter, r *http.Request) {
	st, err := d.images()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	list, err := st.List()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, toAPIImages(list))
}

// pullTimeout bounds one pull or import over the node plane.
const pullTimeout = 30 * time.Minute

// handleImageOp pulls, imports or removes one image.
func (d *Daemon) handleImageOp(w http.ResponseWriter, r *http.Request) {
	var req api.ImageRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	st, err := d.images()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pullTimeout)
	defer cancel()
	var im images.Image
	switch req.Op {
	case api.ImagePull:
		im, err = st.Pull(ctx, req.Ref)
	case api.ImageImport:
		if !filepath.IsAbs(req.Source) {
			err = fmt.Errorf("import source %q must be an absolute path on node %s", req.Source, d.cfg.Name)
			break
		}
		im, err = st.Import(ctx, req.Ref, req.Source)
	case api.ImageRemove:
		im, err = st.Remove(req.Ref)
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown image operation %q (pull, import or rm)", req.Op))
		return
	}
	if errors.Is(err, images.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("node %s: %v", d.cfg.Name, err))
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("node %s: %v", d.cfg.Name, err))
		return
	}
	writeJSON(w, http.StatusOK, toAPIImages([]images.Image{im})[0])
}

func toAPIImages(list []images.Image) []api.Image {
	out := make([]api.Image, 0, len(list))
	for _, im := range list {
		apps, _ := api.ParseAppsLabel(im.Apps) // a label that does not parse declares nothing
		out = append(out, api.Image{Ref: im.Ref, ID: im.ID, Digest: im.Digest, Source: im.Source, Size: im.Size, Created: im.Created,
			Apps: apps})
	}
	return out
}
