package ctld

import (
	"cmp"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Absolute bounds on what one job may ask for, whatever the partitions
// say. They hold even before any node has registered (when fitsSomewhere
// accepts anything), so an absurd request is refused at submit instead of
// pending forever or overflowing arithmetic in the planner and the ledger.
const (
	MaxJobCPUs      = 1 << 16                   // CPUs per node
	MaxJobNodes     = 1 << 16                   // nodes per job
	MaxJobMemBytes  = 1 << 50                   // 1 PiB per node
	MaxJobTimeLimit = int64(366 * 24 * 3600)    // a year and a day, in seconds
	MaxJobGres      = 1 << 16                   // count of one --gres/--gpus entry
	MaxJobNice      = 2147483645                // Slurm's bound on --nice
	maxBeginAhead   = 10 * 366 * 24 * time.Hour // --begin at most ten years ahead
)

// checkAbsurd refuses values no real job asks for, with one line naming
// the field, what was given and the bound.
func checkAbsurd(spec *api.JobSpec, now time.Time) error {
	bad := func(format string, args ...any) error { return errorf(http.StatusBadRequest, format, args...) }
	if err := api.ValidateScript("script", spec.Script); err != nil { // as the CLI checks it
		return bad("%v", err)
	}
	ints := []struct {
		name      string
		v, lo, hi int64
	}{
		{"cpus", int64(spec.CPUs), 0, MaxJobCPUs},
		{"nodes", int64(spec.Nodes), 0, MaxJobNodes},
		{"mem_bytes", spec.MemBytes, 0, MaxJobMemBytes},
		{"shm_bytes", spec.ShmBytes, 0, MaxJobMemBytes},
		{"mem_per_cpu_bytes", spec.MemPerCPU, 0, MaxJobMemBytes},
		{"mem_per_gpu_bytes", spec.MemPerGPU, 0, MaxJobMemBytes},
		{"time_limit_s", spec.TimeLimit, 0, MaxJobTimeLimit},
		{"cpus_per_task", int64(spec.CPUsPerTask), 0, MaxJobCPUs},
		{"cpus_per_gpu", int64(spec.CPUsPerGPU), 0, MaxJobCPUs},
		{"ntasks", int64(spec.Ntasks), 0, MaxJobCPUs * MaxJobNodes},
		{"ntasks_per_node", int64(spec.NtasksPerNode), 0, MaxJobCPUs},
		{"nice", int64(spec.Nice), -MaxJobNice, MaxJobNice},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return bad("%s=%d is out of range: it must be between %d and %d", f.name, f.v, f.lo, f.hi)
		}
	}
	if err := checkSizes(spec); err != nil { // every string and list, nested ones too
		return err
	}
	for name, list := range map[string][]api.GresRequest{"gres": spec.Gres, "gpus": spec.GPUs,
		"gpus_per_node": spec.GPUsPerNode, "gpus_per_task": spec.GPUsPerTask} {
		for _, g := range list {
			if g.Count < 0 || g.Count > MaxJobGres {
				return bad("%s %s count %d is out of range: it must be between 0 and %d", name, g.Name, g.Count, MaxJobGres)
			}
		}
	}
	if spec.Begin != nil && spec.Begin.After(now.Add(maxBeginAhead)) {
		return bad("begin time %s is more than ten years ahead", spec.Begin.Format(time.RFC3339))
	}
	if _, err := api.ParseUmask(spec.Umask); err != nil {
		return bad("%v", err)
	}
	return nil
}

// longStrings are the strings allowed past api.MaxFieldBytes, with their
// own bound.
var longStrings = map[reflect.Type]map[string]int{
	reflect.TypeFor[api.JobSpec](): {"Script": api.MaxScriptBytes},
}

// checkSizes refuses a request (or a spec) with a string longer than
// api.MaxFieldBytes or a list or map of more than api.MaxListEntries
// entries, naming the field by its JSON path (env[3], mounts[0].source).
// It walks every field, nested and future ones included: a hand-kept
// list of fields is how an environment entry of 70 KB got through.
func checkSizes(v any) error {
	err := walkSizes(reflect.ValueOf(v), api.MaxFieldBytes)
	if err == nil {
		return nil
	}
	path := strings.TrimPrefix(err.path, ".")
	return errorf(http.StatusBadRequest, "%s %s", cmp.Or(path, "the request"), err.what)
}

// sizeError is an oversized value; its path is built as the walk
// unwinds, so a walk that finds nothing formats nothing.
type sizeError struct{ path, what string }

func (e *sizeError) in(segment string) *sizeError {
	e.path = segment + e.path
	return e
}

func walkSizes(v reflect.Value, maxBytes int) *sizeError {
	tooLong := func(n int) *sizeError {
		return &sizeError{what: fmt.Sprintf("is %d bytes long; at most %d are allowed", n, maxBytes)}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walkSizes(v.Elem(), maxBytes)
		}
	case reflect.String:
		if v.Len() > maxBytes {
			return tooLong(v.Len())
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() > maxBytes { // []byte is a string in JSON (base64)
				return tooLong(v.Len())
			}
			return nil
		}
		if v.Len() > api.MaxListEntries {
			return &sizeError{what: fmt.Sprintf("has %d entries; at most %d are allowed", v.Len(), api.MaxListEntries)}
		}
		if v.Kind() != reflect.Map {
			for i := range v.Len() {
				if err := walkSizes(v.Index(i), maxBytes); err != nil {
					return err.in(fmt.Sprintf("[%d]", i))
				}
			}
			return nil
		}
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if err := walkSizes(k, maxBytes); err != nil {
				return err.in(" (a key)")
			}
			if err := walkSizes(it.Value(), maxBytes); err != nil {
				if k.Kind() == reflect.String && k.Len() > 40 {
					return err.in("[...]") // a long key is not repeated
				}
				return err.in(fmt.Sprintf("[%v]", k))
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || tag == "-" {
				continue
			}
			limit := api.MaxFieldBytes
			if n, ok := longStrings[t][f.Name]; ok {
				limit = n
			}
			if err := walkSizes(v.Field(i), limit); err != nil {
				if f.Anonymous {
					return err
				}
				return err.in("." + cmp.Or(tag, f.Name))
			}
		}
	}
	return nil
}
