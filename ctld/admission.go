package ctld

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/jobspec"
)

// Admission is every check a submit (and a --test-only submit) gets, as
// three ordered lists of small steps over a copy of the spec:
//
//   - checks judge the spec as sent: the rules shared with the CLI
//     (jobspec.Validate) and the controller's own that need nothing
//     filled in;
//   - mutators fill in what the job left out (partition, nodes, name,
//     time limit, memory, the nodes -w and -x leave, account) and refuse
//     what they cannot fill;
//   - validators judge the completed job against the cluster (partition
//     limits, fit on the nodes, mounts, policies).
//
// Every problem of the checks and mutators is reported at once. The
// validators run only on a job with none: they judge sizes and defaults,
// and an invalid or half-filled job would only give follow-on errors.
// Nothing is applied to the caller's spec; the filled copy is returned
// only when the job is admitted.

// admission is one submit under judgement: who asks, and what the
// mutators learnt for the validators. Its steps read the controller's
// state through s, under s.mu (read).
type admission struct {
	s      *Server
	caller peer
	owner  account
	now    time.Time

	part api.Partition // the job's partition, once the partition step found it
	// known are that partition's registered nodes; the placement step
	// keeps those the job may use (-w, -x).
	known []*node
}

// admissionStep is one named rule. A mutator may change spec; a check or
// validator must not.
type admissionStep struct {
	name string
	run  func(a *admission, spec *api.JobSpec) error
}

var (
	admissionChecks = []admissionStep{
		{"spec", checkSpecRules},
		{"qos", checkQOS},
		{"nice", checkNice},
		{"array", checkArrayLimit},
		{"dependency", checkDependencyTargets},
		{"gres", checkGresNames},
		{"image", checkImage},
	}
	admissionMutators = []admissionStep{
		{"partition", setPartition},
		{"sharing", setSharing},
		{"tasks", spreadTasks},
		{"defaults", setDefaults},
		{"placement", setPlacement},
		{"account", setAccount},
	}
	admissionValidators = []admissionStep{
		{"time limit", checkMaxTime},
		{"fit", checkFit},
		{"mounts", checkMountRoots},
		{"policy", checkPolicy},
	}
)

// admit runs every step over a copy of spec. It returns the filled copy,
// or the refusal naming every problem found. The caller holds s.mu (read).
// The copy is shallow: mutators set fields, never what a field points to.
func (a *admission) admit(spec api.JobSpec) (api.JobSpec, error) {
	var problems []error
	run := func(steps []admissionStep) {
		for _, st := range steps {
			if err := st.run(a, &spec); err != nil {
				var list api.Problems
				if errors.As(err, &list) {
					problems = append(problems, list...)
				} else {
					problems = append(problems, err)
				}
			}
		}
	}
	run(admissionChecks)
	run(admissionMutators)
	if len(problems) == 0 {
		run(admissionValidators)
	}
	return spec, refusal(problems)
}

// refusal is the one error a refused submit answers with: one problem as
// it is, several joined by api.Problems under the first one's fault kind
// (a forbidden --nice stays forbidden). jobspec's problems are plain
// errors: the caller's, so invalid.
func refusal(problems []error) error {
	if len(problems) == 0 {
		return nil
	}
	kind := fault.Invalid
	var fe *fault.Error
	if errors.As(problems[0], &fe) {
		kind = fe.Kind
	}
	if len(problems) == 1 && fe != nil {
		return problems[0]
	}
	return fault.Errorf(kind, "%v", api.Problems(problems))
}

// invalid is a problem of the job the caller sent.
func invalid(format string, args ...any) error {
	return fault.Errorf(fault.Invalid, format, args...)
}

// ---- checks ----

// checkSpecRules applies the rules the CLI applies before sending; each
// problem is the caller's. The sizes are not walked again: every
// user-plane body was, as it was decoded (decodeBody).
func checkSpecRules(_ *admission, spec *api.JobSpec) error {
	var list api.Problems
	if err := jobspec.ValidateRules(spec); !errors.As(err, &list) {
		return err
	}
	out := make(api.Problems, len(list))
	for i, e := range list {
		out[i] = fault.Errorf(fault.Invalid, "%v", e)
	}
	return out
}

// checkNice: a negative --nice raises a job above others; only root may.
func checkNice(a *admission, spec *api.JobSpec) error {
	if spec.Nice < 0 && a.caller.UID != 0 {
		return fault.Errorf(fault.Forbidden, "only root may give a negative --nice (got %d)", spec.Nice)
	}
	return nil
}

// checkArrayLimit holds an array to this cluster's MaxArrayTasks.
func checkArrayLimit(a *admission, spec *api.JobSpec) error {
	if spec.Array == nil {
		return nil
	}
	if n, limit := countRanges(spec.Array.Ranges), a.s.cfg.Pipeline.MaxArrayTasks; n > limit {
		return invalid("invalid --array: %d tasks is more than this cluster's limit of %d", n, limit)
	}
	return nil
}

// checkImage refuses a --container-image reference no node could pull.
func checkImage(_ *admission, spec *api.JobSpec) error {
	if spec.ContainerImage == "" {
		return nil
	}
	if _, err := images.Canonical(spec.ContainerImage); err != nil {
		return invalid("--container-image: %v", err)
	}
	return nil
}

// ---- mutators ----

// setPartition fills in the default partition and refuses an unknown one.
func setPartition(a *admission, spec *api.JobSpec) error {
	parts := &a.s.parts
	if spec.Partition == "" {
		spec.Partition = parts.def
	}
	part, ok := parts.byName[spec.Partition]
	if !ok && strings.Contains(spec.Partition, ",") {
		// Slurm runs such a job in whichever listed partition starts it
		// first; corral's jobs have one.
		return invalid("--partition %s lists several partitions; corral runs a job in one: give one of %s",
			spec.Partition, strings.Join(parts.names(), ", "))
	}
	if !ok {
		return invalid("partition %s does not exist (partitions: %s)", spec.Partition, strings.Join(parts.names(), ", "))
	}
	a.part, a.known = part, a.s.nodes.inPartition(a.s.parts, part.Name)
	return nil
}

// setDefaults fills in nodes, name, time limit and memory, as docs/api.md
// lists them. It needs the partition.
func setDefaults(a *admission, spec *api.JobSpec) error {
	if a.part.Name == "" {
		return nil // the partition step said why
	}
	if spec.Nodes == 0 {
		spec.Nodes = 1
	}
	if spec.Name == "" {
		spec.Name = "script"
	}
	if spec.TimeLimit == 0 {
		spec.TimeLimit = a.part.DefaultTime
		if spec.TimeLimit == 0 {
			spec.TimeLimit = a.part.MaxTime // Slurm: no DefaultTime means MaxTime
		}
	}
	switch {
	case spec.MemWholeNode:
	case spec.MemBytes == 0 && spec.Exclusive == "node":
		// Per CPU, so the start scales it to all the node's CPUs, as Slurm
		// applies DefMemPerCPU to the CPUs a job is given; never more per
		// CPU than a known node has, so every node can hold it.
		spec.MemPerCPU = memPerCPU(a.part, a.known)
		if least := memPerCPU(api.Partition{}, a.known); len(a.known) > 0 {
			spec.MemPerCPU = min(spec.MemPerCPU, least)
		}
		spec.MemBytes = int64(spec.CPUs) * spec.MemPerCPU
	case spec.MemBytes == 0:
		spec.MemBytes = int64(spec.CPUs) * memPerCPU(a.part, a.known)
	}
	return nil
}

// setAccount fills in the owner's default account or refuses one the
// owner may not charge.
func setAccount(a *admission, spec *api.JobSpec) error {
	account, err := a.s.fs.Account(a.owner.Name, spec.Account)
	if err != nil {
		return fault.Errorf(fault.Invalid, "%s", err)
	}
	spec.Account = account
	return nil
}

// ---- validators ----

// checkMaxTime holds the time limit to the partition's MaxTime.
func checkMaxTime(a *admission, spec *api.JobSpec) error {
	if limit := a.part.MaxTime; limit > 0 && spec.TimeLimit > limit {
		return invalid("time limit %s is over partition %s's MaxTime of %s",
			config.FormatTime(spec.TimeLimit), a.part.Name, config.FormatTime(limit))
	}
	return nil
}

// checkFit refuses a job no registered node of its partition could ever
// hold, CPUs and memory first, then GPUs: one reason, the first.
func checkFit(a *admission, spec *api.JobSpec) error {
	if err := fitsSomewhere(spec, a.part.Name, a.known); err != nil {
		return err
	}
	return gpusFit(spec, gpuRequestOf(spec), a.owner.UID, a.known, a.s.parts)
}

// checkPolicy refuses a job over its user's or account's policy.
func checkPolicy(a *admission, spec *api.JobSpec) error {
	return a.s.checkPolicySubmitLocked(a.owner.Name, spec)
}

// memPerCPU is the partition's DefMemPerCPU, else the smallest memory per
// CPU among its known nodes (a default job then fits any of them), else
// 1 GiB.
func memPerCPU(part api.Partition, known []*node) int64 {
	if part.DefaultMemPerCPU > 0 {
		return part.DefaultMemPerCPU
	}
	var best int64
	for _, n := range known {
		if n.rec.CPUs < 1 {
			continue
		}
		if ratio := n.rec.MemBytes / int64(n.rec.CPUs); best == 0 || ratio < best {
			best = ratio
		}
	}
	if best == 0 {
		return defaultMemPerCPU
	}
	return best
}

// fitsSomewhere rejects a job that no known node of its partition could
// ever hold. With no known node yet anything is accepted: nodes may
// register later.
func fitsSomewhere(spec *api.JobSpec, part string, known []*node) error {
	if len(known) == 0 {
		return nil
	}
	var maxCPUs int
	var maxMem int64
	fit := 0
	for _, n := range known {
		maxCPUs = max(maxCPUs, n.rec.CPUs)
		maxMem = max(maxMem, n.rec.MemBytes)
		if spec.CPUs <= n.rec.CPUs && spec.MemBytes <= n.rec.MemBytes {
			fit++
		}
	}
	never := func(format string, args ...any) error {
		return invalid("%s: it could never run", fmt.Sprintf(format, args...))
	}
	switch {
	case spec.CPUs > maxCPUs:
		return never("job asks for %d CPUs per node but the largest node in partition %s has %d", spec.CPUs, part, maxCPUs)
	case spec.MemBytes > maxMem:
		return never("job asks for %s memory per node but the largest node in partition %s has %s",
			config.FormatSize(spec.MemBytes), part, config.FormatSize(maxMem))
	case fit == 0:
		return never("job asks for %d CPUs and %s memory per node but no node in partition %s has both",
			spec.CPUs, config.FormatSize(spec.MemBytes), part)
	case fit < spec.Nodes:
		return never("job asks for %d nodes but partition %s has %d that can hold it", spec.Nodes, part, fit)
	}
	return nil
}
