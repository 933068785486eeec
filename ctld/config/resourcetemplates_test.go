package config

import (
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// ResourceTemplate lines become the file's templates in file order, with
// sizes and fGPU read as everywhere else in the file.
func TestResourceTemplateLines(t *testing.T) {
	f := mustParseFile(t, "ResourceTemplate=small CPUs=2 Mem=4G SharedMem=1G FGPU=0.5\nresourcetemplate=big cpus=8 mem=32768\n")
	want := []api.ResourceTemplate{
		{Name: "small", CPUs: 2, MemBytes: 4 << 30, ShmBytes: 1 << 30, FGPUHundredths: 50},
		{Name: "big", CPUs: 8, MemBytes: 32 << 30},
	}
	if len(f.Templates) != len(want) {
		t.Fatalf("templates %+v, want %+v", f.Templates, want)
	}
	for i := range want {
		if f.Templates[i] != want[i] {
			t.Errorf("template %d: %+v, want %+v", i, f.Templates[i], want[i])
		}
	}
	if got := mustParseFile(t, "").Templates; len(got) != 0 {
		t.Errorf("a file without templates has %v", got)
	}
}

// Every bad template line is one error naming the file, the line and what
// is wrong.
func TestResourceTemplateErrors(t *testing.T) {
	for text, want := range map[string]string{
		"ResourceTemplate=a CPUs=2\n":                                          "corral.conf:2: resource template a needs CPUs= and Mem=",
		"ResourceTemplate=a Mem=1G\n":                                          "corral.conf:2: resource template a needs CPUs= and Mem=",
		"ResourceTemplate=a CPUs=0 Mem=1G\n":                                   "corral.conf:2: CPUs=0: give a whole number from 1 to 65536",
		"ResourceTemplate=a CPUs=two Mem=1G\n":                                 "corral.conf:2: CPUs=two: give a whole number",
		"ResourceTemplate=a CPUs=1 Mem=lots\n":                                 "corral.conf:2: Mem=lots:",
		"ResourceTemplate=a CPUs=1 Mem=0\n":                                    "corral.conf:2: Mem=0: must be more than 0",
		"ResourceTemplate=a CPUs=1 Mem=1G SharedMem=2G\n":                      "corral.conf:2: resource template a: SharedMem 2G is more than Mem 1G",
		"ResourceTemplate=a CPUs=1 Mem=1G FGPU=0.333\n":                        "corral.conf:2: FGPU=0.333: invalid fGPU amount",
		"ResourceTemplate=a CPUs=1 Mem=1G GPUs=1\n":                            "corral.conf:2: unknown key GPUs on a ResourceTemplate line (valid: ResourceTemplate, CPUs, Mem, SharedMem, FGPU)",
		"ResourceTemplate=a CPUs=1 CPUs=2 Mem=1G\n":                            "corral.conf:2: CPUs is given twice",
		"ResourceTemplate=a/b CPUs=1 Mem=1G\n":                                 "corral.conf:2: ResourceTemplate=a/b: a name is 1 to 64 letters",
		"ResourceTemplate=a CPUs=1 Mem=1G\nResourceTemplate=a CPUs=2 Mem=2G\n": "corral.conf:3: resource template a is already defined on line 2",
		"ResourceTemplate=a CPUs=1 Mem\n":                                      `corral.conf:2: "Mem" is not KEY=VALUE`,
	} {
		_, err := ParseFile(strings.NewReader(partitionLine+text), "corral.conf")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
