package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
)

// A ResourceTemplate line is an admin-defined preset of a session's
// resources, which the dashboard's launch dialog offers as a choice that
// sets its sliders (seed 002's "resource allocation"):
//
//	ResourceTemplate=small CPUs=2 Mem=4G SharedMem=1G FGPU=0.5
//
// CPUs and Mem are required; SharedMem (at most Mem) and FGPU are not.
// A template names resources only: the job is still checked against the
// user's policy and the nodes at submit, like any other.

// templateKeys lists the keys of a ResourceTemplate line, in the order
// documented.
var templateKeys = []string{"ResourceTemplate", "CPUs", "Mem", "SharedMem", "FGPU"}

// templateName is what a template may be called: it appears in URLs and
// in the equivalent command's comment.
var templateName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// maxTemplateCPUs bounds CPUs= as the dashboard's form bounds -c.
const maxTemplateCPUs = 1 << 16

// addTemplate reads one ResourceTemplate line into f.Templates; lines
// maps each template's name to its line, so a name is defined once.
func addTemplate(fields []string, lineNo int, lines map[string]int, f *File) error {
	var t api.ResourceTemplate
	given := map[string]bool{}
	for _, fl := range fields {
		k, v, ok := strings.Cut(fl, "=")
		if !ok {
			return fmt.Errorf("%q is not KEY=VALUE", fl)
		}
		key := canonicalIn(k, templateKeys)
		if key == "" {
			return fmt.Errorf("unknown key %s on a ResourceTemplate line (valid: %s)", k, strings.Join(templateKeys, ", "))
		}
		if given[key] {
			return fmt.Errorf("%s is given twice", key)
		}
		given[key] = true
		if v == "" {
			return fmt.Errorf("%s has no value", key)
		}
		if err := setTemplateKey(&t, key, v); err != nil {
			return err
		}
	}
	switch {
	case !given["CPUs"] || !given["Mem"]:
		return fmt.Errorf("resource template %s needs CPUs= and Mem= (SharedMem= and FGPU= may follow)", t.Name)
	case t.ShmBytes > t.MemBytes:
		return fmt.Errorf("resource template %s: SharedMem %s is more than Mem %s", t.Name, FormatSize(t.ShmBytes), FormatSize(t.MemBytes))
	}
	if prev, dup := lines[t.Name]; dup {
		return fmt.Errorf("resource template %s is already defined on line %d", t.Name, prev)
	}
	lines[t.Name] = lineNo
	f.Templates = append(f.Templates, t)
	return nil
}

func setTemplateKey(t *api.ResourceTemplate, key, v string) error {
	var err error
	switch key {
	case "ResourceTemplate":
		if !templateName.MatchString(v) {
			return fmt.Errorf("ResourceTemplate=%s: a name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", v)
		}
		t.Name = v
	case "CPUs":
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > maxTemplateCPUs {
			return fmt.Errorf("CPUs=%s: give a whole number from 1 to %d", v, maxTemplateCPUs)
		}
		t.CPUs = n
	case "Mem":
		t.MemBytes, err = ParseSize(v)
		if err == nil && t.MemBytes == 0 {
			err = fmt.Errorf("must be more than 0")
		}
	case "SharedMem":
		t.ShmBytes, err = ParseSize(v)
	case "FGPU":
		var h gpu.Hundredths
		h, err = gpu.ParseFGPU(v)
		t.FGPUHundredths = int(h)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: %v", key, v, err)
	}
	return nil
}
