package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// A chosen template's resources replace the sliders', an unknown one is
// refused by name, and the equivalent command says what the job gets.
func TestLaunchFormTemplate(t *testing.T) {
	templates := []api.ResourceTemplate{{Name: "gpu", CPUs: 4, MemBytes: 8 << 30, ShmBytes: 1 << 30, FGPUHundredths: 50}}
	v := url.Values{"cpus": {"1"}, "mem_mib": {"100"}, "sessions": {"2"}, "template": {"gpu"}, "group": {"batch"},
		"command": {"python train.py --name 'x'"}}
	f, err := readLaunchForm(v, templates)
	if err != nil {
		t.Fatal(err)
	}
	if f.CPUs != 4 || f.MemMiB != 8192 || f.ShmMiB != 1024 || f.FGPU != 0.5 || f.Sessions != 2 {
		t.Fatalf("form with template gpu: %+v", f)
	}
	want := `corral submit -p batch -c 4 --mem 8192M --shm 1024M --fgpu 0.5 --wrap 'python train.py --name '\''x'\''' # resource template gpu`
	if got := f.Equivalent(); got != want {
		t.Errorf("equivalent:\n got %s\nwant %s", got, want)
	}
	s := f.spec("/home/u")
	if s.CPUs != 4 || s.MemBytes != 8<<30 || s.ShmBytes != 1<<30 || s.FGPUHundredths != 50 || !sessionName.MatchString(s.Name) {
		t.Errorf("spec: %+v", s)
	}
	if f.spec("/home/u").Name == s.Name {
		t.Errorf("two unnamed sessions were both called %s", s.Name)
	}
	v.Set("template", "nope")
	if _, err := readLaunchForm(v, templates); err == nil || !strings.Contains(err.Error(), `"nope" does not exist (there are: gpu)`) {
		t.Errorf("unknown template: %v", err)
	}
	if _, err := readLaunchForm(v, nil); err == nil || !strings.Contains(err.Error(), "this cluster defines none") {
		t.Errorf("a template where there are none: %v", err)
	}
}

// An uploaded script's name goes into the equivalent command only when a
// shell needs no quotes for it.
func TestScriptFileName(t *testing.T) {
	for in, want := range map[string]string{
		"train.sh": "train.sh", `C:\Users\me\run.sh`: "run.sh", "/tmp/a b.sh": "script.sh",
		"-rf": "script.sh", "x;rm.sh": "script.sh", "": "script.sh",
	} {
		if got := scriptFileName(in); got != want {
			t.Errorf("scriptFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The images become environments (repositories) with their versions
// (tags), in order; a digest's colon or a registry's port is no tag.
func TestEnvironments(t *testing.T) {
	got := environments([]string{"docker.io/library/python:3.12", "localhost:5000/tf:2.2", "docker.io/library/python:3.11", "tf"})
	want := "docker.io/library/python[3.11 3.12] localhost:5000/tf[2.2] tf[latest]"
	var parts []string
	for _, e := range got {
		var tags []string
		for _, v := range e.Versions {
			tags = append(tags, v.Tag)
		}
		parts = append(parts, e.Name+"["+strings.Join(tags, " ")+"]")
	}
	if s := strings.Join(parts, " "); s != want {
		t.Errorf("environments: %s, want %s", s, want)
	}
	if got[1].Versions[0].Ref != "localhost:5000/tf:2.2" {
		t.Errorf("a version's value is %q, not the image's reference", got[1].Versions[0].Ref)
	}
}
