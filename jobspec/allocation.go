package jobspec

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// ParseAllocation reads salloc's command line: sbatch's options, then the
// command to run in the allocation (none: the caller runs a shell). srun
// outside an allocation hands it the allocation options it was given, in
// sbatch's spelling, so both ask for nodes, CPUs, memory, time, GPUs,
// images and mounts exactly as sbatch does. The job's name is -J, else
// the command's base name. An allocation has no script, output files or
// array: --wrap and --array are refused (Validate refuses the array).
// env gives salloc's input variables (SALLOC_PARTITION, ...; nil: none),
// which the command line overrides.
func ParseAllocation(args []string, env LookupFunc, now time.Time) (*Request, []string, error) {
	cmdline, rest, err := parseOptions(args, true)
	if err != nil {
		return nil, nil, err
	}
	envSets, err := envSettings(env, sallocOptions)
	if err != nil {
		return nil, nil, err
	}
	r := newRequest(now)
	if err := applyEnv(r, envSets); err != nil {
		return nil, nil, err
	}
	if err := applyAll(r, cmdline); err != nil {
		return nil, nil, err
	}
	if r.Help || r.Version {
		return &Request{Help: r.Help, Version: r.Version && !r.Help}, nil, nil
	}
	if r.st.wrap != nil {
		return nil, nil, errors.New("--wrap is for batch scripts: give the command itself after the options")
	}
	if err := checkConflicts(r); err != nil {
		return nil, nil, err
	}
	if err := resolveResources(r); err != nil {
		return nil, nil, err
	}
	for _, name := range r.st.ignored {
		r.Warnings = append(r.Warnings, fmt.Sprintf("--%s is ignored: %s", name, optionByName(name).ignore))
	}
	for _, name := range r.st.noteKeys {
		if msg, ok := r.st.notes[name]; ok {
			r.Warnings = append(r.Warnings, msg)
		}
	}
	r.st = nil
	if r.Spec.Name == "" {
		r.Spec.Name = "interactive"
		if len(rest) > 0 {
			r.Spec.Name = DefaultJobName(filepath.Base(rest[0]))
		}
	}
	r.Spec.Allocation = true
	return r, rest, nil
}
