package images

import (
	"context"
	"testing"

	"github.com/corral-hpc/corral/images/imagetest"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// The corral.apps label of an image's config is kept with the image, so
// the node can tell the dashboard which apps the image serves.
func TestImportKeepsAppsLabel(t *testing.T) {
	img := imagetest.MustImage(t, "1", nil)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.Labels = map[string]string{AppsLabel: "jupyter:8888,tensorboard:6006", "other": "x"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	s := mustStore(t)
	im, err := s.Import(context.Background(), "nb:1", imagetest.MustLayout(t, "1", img))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("nb:1")
	if err != nil || im.Apps != "jupyter:8888,tensorboard:6006" || got.Apps != im.Apps {
		t.Fatalf("apps label: imported %q, listed %q (%v)", im.Apps, got.Apps, err)
	}
}
