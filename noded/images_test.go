package noded

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// Issue 11: a job's --container-image without a registry (or on a
// registry the node does not pull from) is refused at launch, as the
// job's fault, before any lookup; the shim is told the registries.
func TestLaunchRefusesAnImageFromNoConfiguredRegistry(t *testing.T) {
	d := &Daemon{cfg: Config{Name: "n1", ImageStore: filepath.Join(t.TempDir(), "images")}}
	for _, ref := range []string{"nosuch:latest", "docker.io/library/ubuntu"} {
		err := d.prepareEnvironment(&api.LaunchRequest{JobID: 7, Image: ref}, &shim.Job{})
		var le *launchError
		if !errors.As(err, &le) || le.code != http.StatusBadRequest || le.kind != api.KindJobRefused || !strings.Contains(le.msg, ref) {
			t.Errorf("launch with image %s: %v; want a job refusal", ref, err)
		}
	}
	d.cfg.ImageRegistries = []string{"registry.site"}
	sj := &shim.Job{}
	if err := d.prepareEnvironment(&api.LaunchRequest{JobID: 8, Image: "app:1"}, sj); err != nil || len(sj.ImageRegistries) != 1 {
		t.Fatalf("an image of the configured registry: %v, shim gets %v", err, sj.ImageRegistries)
	}
	bad := Config{ImageRegistries: []string{"registry.site/team"}}
	if err := bad.normalizeEnvironments(); err == nil || !strings.Contains(err.Error(), "--image-registry") {
		t.Errorf("--image-registry with a path: %v", err)
	}
}
