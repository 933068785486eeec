package ctld

import (
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/corral-hpc/corral/ctld/fairshare"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/policy"
	"github.com/corral-hpc/corral/priority"
)

// admissionFixture is the little state admission steps read, without a
// server: partitions, registered nodes, jobs, accounts and policies.
type admissionFixture struct {
	t *testing.T
	a *admission
}

// newAdmission is alice (uid 1000) submitting to partitions batch (the
// default, DefaultTime 1h, MaxTime 1d) and big, with no node yet, in a
// cluster whose accounts are chem and physics (alice: chem).
func newAdmission(t *testing.T) *admissionFixture {
	t.Helper()
	sc := config.DefaultScheduling()
	sc.Priority.Accounts = []priority.Account{{Name: "chem"}, {Name: "physics"}}
	sc.Priority.Users = []priority.User{{Name: "alice", Account: "chem"}}
	fs, err := fairshare.New(sc, usageRules)
	if err != nil {
		t.Fatal(err)
	}
	pols, err := policy.Load(filepath.Join(t.TempDir(), PoliciesFile))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		parts: newPartitions([]api.Partition{
			{Name: "batch", Default: true, AllNodes: true, DefaultTime: 3600, MaxTime: 86400},
			{Name: "big", Nodes: []string{"n9"}, DefaultMemPerCPU: 4 << 30},
		}),
		q: newQueue(), nodes: newNodeRegistry(),
		fs: fs, policies: pols,
		cfg: Config{Pipeline: PipelineConfig{MaxArrayTasks: 10}},
	}
	return &admissionFixture{t: t, a: &admission{s: s, caller: peer{UID: 1000}, owner: account{UID: 1000, Name: "alice"}, now: time.Now()}}
}

// node registers a node of cpus CPUs and mem bytes allowing mounts under roots.
func (f *admissionFixture) node(name string, cpus int, mem int64, roots ...string) *admissionFixture {
	f.a.s.nodes.put(name, &node{rec: store.NodeRecord{Name: name, CPUs: cpus, MemBytes: mem, MountRoots: roots}, up: true})
	return f
}

// job adds a plain job with this ID.
func (f *admissionFixture) job(id uint64) *admissionFixture {
	f.a.s.q.jobs[id] = &job{rec: store.JobRecord{Job: api.Job{ID: id}}}
	return f
}

// array adds an array job with these indexes.
func (f *admissionFixture) array(base uint64, first, last int) *admissionFixture {
	arr := &api.JobArray{Ranges: []api.ArrayRange{{First: first, Last: last, Step: 1}}}
	f.a.s.q.addArray(newArrayJob(base, arr))
	return f
}

// policy sets a user policy.
func (f *admissionFixture) policy(user string, l api.Limits) *admissionFixture {
	if err := f.a.s.policies.Put(api.Policy{Kind: api.PolicyUser, Name: user, Limits: l}); err != nil {
		f.t.Fatal(err)
	}
	return f
}

// features gives n1 the features gpu,a100 and n2 gpu,ib.
func (f *admissionFixture) features() *admissionFixture {
	f.a.s.parts.features = map[string][]string{"n1": {"gpu", "a100"}, "n2": {"gpu", "ib"}}
	return f
}

// root makes the caller root.
func (f *admissionFixture) root() *admissionFixture { f.a.caller.UID = 0; return f }

// in runs the partition step first, as admit does, for the steps after it.
func (f *admissionFixture) in(part string) *admissionFixture {
	spec := api.JobSpec{Partition: part}
	if err := setPartition(f.a, &spec); err != nil {
		f.t.Fatal(err)
	}
	return f
}

// twoCPUNodes is the batch partition with two nodes of 2 CPUs and 2 GiB.
func twoCPUNodes(t *testing.T) *admissionFixture {
	return newAdmission(t).node("n1", 2, 2<<30).node("n2", 2, 2<<30).in("batch")
}

func admissionSpec(mut func(*api.JobSpec)) api.JobSpec {
	s := api.JobSpec{Script: "#!/bin/sh\ntrue\n", CPUs: 1, WorkDir: "/tmp"}
	if mut != nil {
		mut(&s)
	}
	return s
}

// TestAdmissionSteps: each step on its own, with what it refuses (the
// words and status the controller has always answered with) and what it
// fills in.
func TestAdmissionSteps(t *testing.T) {
	task := 2
	for _, tt := range []struct {
		name    string
		step    func(*admission, *api.JobSpec) error
		fixture func(*testing.T) *admissionFixture
		spec    func(*api.JobSpec)
		want    string     // the error; "" accepted
		kind    fault.Kind // its kind, when refused; 0 (internal) means invalid
		filled  func(*api.JobSpec) bool
	}{
		{name: "spec rules", step: checkSpecRules, spec: func(s *api.JobSpec) { s.OpenMode = "x" },
			want: `invalid --open-mode "x" (valid: append, truncate)`},
		{name: "a QOS the cluster has not", step: checkQOS, spec: func(s *api.JobSpec) { s.QOS = "high" },
			want: "QOS high does not exist (this cluster has one: normal); nothing was submitted"},
		{name: "the default QOS", step: checkQOS, spec: func(s *api.JobSpec) { s.QOS = "Normal" }},
		{name: "nice as a user", step: checkNice, spec: func(s *api.JobSpec) { s.Nice = -5 },
			want: "only root may give a negative --nice (got -5)", kind: fault.Forbidden},
		{name: "nice as root", step: checkNice, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).root() },
			spec: func(s *api.JobSpec) { s.Nice = -5 }},
		{name: "array limit", step: checkArrayLimit,
			spec: func(s *api.JobSpec) { s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 10, Step: 1}}} },
			want: "invalid --array: 11 tasks is more than this cluster's limit of 10"},
		{name: "array within the limit", step: checkArrayLimit,
			spec: func(s *api.JobSpec) { s.Array = &api.JobArray{Ranges: []api.ArrayRange{{First: 0, Last: 9, Step: 1}}} }},
		{name: "dependency on a missing job", step: checkDependencyTargets,
			spec: func(s *api.JobSpec) {
				s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 99}}}
			},
			want: "invalid --dependency: job 99 does not exist"},
		{name: "dependency on jobs that exist", step: checkDependencyTargets,
			fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).job(7).array(20, 0, 3) },
			spec: func(s *api.JobSpec) {
				s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{
					{Type: api.DependAfterOK, JobID: 7}, {Type: api.DependAfterAny, JobID: 20, ArrayTask: &task},
					{Type: api.DependAfterAny, JobID: 22}, {Type: api.DependSingleton}}}
			}},
		{name: "dependency on a missing task", step: checkDependencyTargets,
			fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).job(7).array(20, 0, 1) },
			spec: func(s *api.JobSpec) {
				s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 20, ArrayTask: &task}}}
			},
			want: "invalid --dependency: array job 20 has no task 2"},
		{name: "dependency on a task of a plain job", step: checkDependencyTargets,
			fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).job(7) },
			spec: func(s *api.JobSpec) {
				s.Dependency = &api.Dependency{Conditions: []api.DependencyCondition{{Type: api.DependAfterOK, JobID: 7, ArrayTask: &task}}}
			},
			want: "invalid --dependency: job 7 is not an array job, so 7_2 names nothing"},
		{name: "gres", step: checkGresNames, spec: func(s *api.JobSpec) { s.Gres = []api.GresRequest{{Name: "nic", Count: 1}} },
			want: `generic resource "nic" does not exist on this cluster (it has gpu); nothing was submitted`},
		{name: "image", step: checkImage, spec: func(s *api.JobSpec) { s.ContainerImage = "UPPER/Case" },
			want: "--container-image: "},
		{name: "default partition", step: setPartition,
			filled: func(s *api.JobSpec) bool { return s.Partition == "batch" }},
		{name: "unknown partition", step: setPartition, spec: func(s *api.JobSpec) { s.Partition = "gpu" },
			want: "partition gpu does not exist (partitions: batch, big)"},
		{name: "a partition list", step: setPartition, spec: func(s *api.JobSpec) { s.Partition = "batch,big" },
			want: "--partition batch,big lists several partitions; corral runs a job in one: give one of batch, big"},
		{name: "defaults", step: setDefaults, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("batch") },
			spec: func(s *api.JobSpec) { s.CPUs = 2 },
			filled: func(s *api.JobSpec) bool {
				return s.Nodes == 1 && s.Name == "script" && s.TimeLimit == 3600 && s.MemBytes == 2*defaultMemPerCPU
			}},
		{name: "defaults from nodes", step: setDefaults,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 4, 16<<30).in("batch")
			},
			filled: func(s *api.JobSpec) bool { return s.MemBytes == 1<<30 }},
		{name: "defaults of the partition", step: setDefaults, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("big") },
			spec: func(s *api.JobSpec) { s.Name, s.Nodes, s.TimeLimit = "mine", 3, 60 },
			filled: func(s *api.JobSpec) bool {
				return s.Name == "mine" && s.Nodes == 3 && s.TimeLimit == 60 && s.MemBytes == 4<<30
			}},
		{name: "tasks that fit one node stay on one", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs = 2, 2 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 2 }},
		{name: "tasks spread over the nodes they need", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs = 4, 4 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 2 && s.CPUs == 2 }},
		{name: "an odd count of tasks spreads unevenly", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs = 3, 3 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 2 && s.CPUs == 2 }},
		{name: "spread tasks keep their memory per CPU", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUsPerTask, s.CPUs, s.MemPerCPU, s.MemBytes = 2, 2, 4, 1<<30, 4<<30 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 2 && s.CPUs == 2 && s.MemBytes == 2<<30 }},
		{name: "memory per node counts where tasks go", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs, s.MemBytes = 2, 2, 3<<30 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 2 }},
		{name: "tasks the partition cannot hold are left for the fit check", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUsPerTask, s.CPUs = 3, 2, 6 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 6 }},
		{name: "a node count keeps the shape asked", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Nodes, s.Ntasks, s.CPUs = 1, 4, 4 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 1 && s.CPUs == 4 }},
		{name: "tasks per node keep the shape asked", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.NtasksPerNode, s.CPUs = 4, 4, 4 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 4 }},
		{name: "mincpus keeps the shape asked", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs = 2, 4 },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 4 }},
		{name: "GPU jobs keep the shape asked", step: spreadTasks, fixture: twoCPUNodes,
			spec: func(s *api.JobSpec) {
				s.Ntasks, s.CPUs, s.GPUsPerTask = 4, 4, []api.GresRequest{{Name: "gpu", Count: 1}}
			},
			filled: func(s *api.JobSpec) bool { return s.Nodes == 0 && s.CPUs == 4 }},
		{name: "a nodelist shapes tasks for its nodes", step: spreadTasks, fixture: twoCPUNodes,
			spec:   func(s *api.JobSpec) { s.Ntasks, s.CPUs, s.NodeList = 2, 2, []string{"n1", "n2"} },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 2 && s.CPUs == 1 }},
		{name: "nodelist raises the node count", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).in("batch")
			},
			spec:   func(s *api.JobSpec) { s.Nodes, s.NodeList = 1, []string{"n1", "n2"} },
			filled: func(s *api.JobSpec) bool { return s.Nodes == 2 }},
		{name: "nodelist shorter than the node count", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.NodeList = 2, []string{"n2"} },
			want: "--nodes=2 is more than the 1 node(s) of --nodelist n2: corral runs a --nodelist job on exactly the listed nodes"},
		{name: "nodelist names a node of no partition", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.NodeList = 1, []string{"n7"} },
			want: "--nodelist: node n7 is not in partition batch (its nodes: n[1-2])"},
		{name: "nodelist outside a configured partition", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("big") },
			spec:    func(s *api.JobSpec) { s.Nodes, s.NodeList = 1, []string{"n1", "n2"} },
			want:    "--nodelist: nodes n1,n2 are not in partition big (its nodes: n9)"},
		{name: "exclude leaves nothing", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Exclude = 1, []string{"n1", "n2", "n5"} },
			want: "job asks for 1 node(s) but 0 of partition batch's nodes (n[1-2]) pass --exclude: it could never run"},
		{name: "exclude leaves too few", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Exclude = 2, []string{"n1"} },
			want: "job asks for 2 node(s) but 1 of partition batch's nodes (n[1-2]) pass --exclude: it could never run"},
		{name: "constraint nobody meets", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).features().in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Constraint = 1, "h100" },
			want: "job asks for 1 node(s) but 0 of partition batch's nodes (n[1-2]) pass --constraint h100: it could never run"},
		{name: "constraint and exclude", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).features().in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Constraint, s.Exclude = 1, "a100|ib", []string{"n1", "n2"} },
			want: "job asks for 1 node(s) but 0 of partition batch's nodes (n[1-2]) pass --exclude and --constraint a100|ib"},
		{name: "constraint met", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).features().in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Constraint = 2, "gpu" }},
		{name: "brackets on several nodes", step: setPlacement,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).node("n1", 8, 8<<30).node("n2", 8, 8<<30).features().in("batch")
			},
			spec: func(s *api.JobSpec) { s.Nodes, s.Constraint = 2, "[a100|ib]" },
			want: "--constraint [a100|ib]: [...] on a job of 2 nodes is not supported"},
		{name: "exclude before any node", step: setPlacement, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("batch") },
			spec: func(s *api.JobSpec) { s.Nodes, s.Exclude = 1, []string{"n1"} }},
		{name: "default account", step: setAccount, filled: func(s *api.JobSpec) bool { return s.Account == "chem" }},
		{name: "account not allowed", step: setAccount, spec: func(s *api.JobSpec) { s.Account = "physics" },
			want: "user alice may not charge account physics (alice's accounts: chem); nothing was submitted"},
		{name: "max time", step: checkMaxTime, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("batch") },
			spec: func(s *api.JobSpec) { s.TimeLimit = 2 * 86400 },
			want: "time limit 2-00:00:00 is over partition batch's MaxTime of 1-00:00:00"},
		{name: "fits no node", step: checkFit, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).node("n1", 8, 8<<30).in("batch") },
			spec: func(s *api.JobSpec) { s.CPUs, s.Nodes = 64, 1 },
			want: "job asks for 64 CPUs per node but the largest node in partition batch has 8: it could never run"},
		{name: "fits before any node", step: checkFit, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).in("batch") },
			spec: func(s *api.JobSpec) { s.CPUs, s.Nodes = 64, 1 }},
		{name: "GPUs on no GPU node", step: checkFit, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).node("n1", 8, 8<<30).in("batch") },
			spec: func(s *api.JobSpec) { s.Partition, s.Nodes, s.MemBytes, s.FGPUHundredths = "batch", 1, 1<<20, 50 },
			want: "job asks for 0.5 fGPU per node but no node in partition batch has GPUs: it could never run"},
		{name: "mounts", step: checkMountRoots, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).node("n1", 8, 8<<30, "/data").in("batch") },
			spec: func(s *api.JobSpec) { s.Partition, s.Mounts = "batch", []api.Mount{{Source: "/usr", Target: "/usr"}} },
			want: "no node of partition batch allows --mount /usr (sources must lie under /data)"},
		{name: "mounts allowed", step: checkMountRoots, fixture: func(t *testing.T) *admissionFixture { return newAdmission(t).node("n1", 8, 8<<30, "/data").in("batch") },
			spec: func(s *api.JobSpec) { s.Partition, s.Mounts = "batch", []api.Mount{{Source: "/data/x", Target: "/x"}} }},
		{name: "policy", step: checkPolicy,
			fixture: func(t *testing.T) *admissionFixture {
				return newAdmission(t).policy("alice", api.Limits{MaxCPUsPerJob: 4})
			},
			spec: func(s *api.JobSpec) { s.CPUs, s.Nodes = 8, 1 },
			want: "the job asks for 8 CPUs; the policy of user alice allows at most 4 per job; nothing was submitted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newFixture := newAdmission
			if tt.fixture != nil {
				newFixture = tt.fixture
			}
			f := newFixture(t)
			spec := admissionSpec(tt.spec)
			err := tt.step(f.a, &spec)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("got %v, want %q", err, tt.want)
			case tt.want != "":
				kind := fault.Invalid
				if tt.kind != fault.Internal {
					kind = tt.kind
				}
				if got := fault.KindOf(err); got != kind {
					t.Errorf("kind %v, want %v", got, kind)
				}
			}
			if tt.filled != nil && !tt.filled(&spec) {
				t.Errorf("filled in %+v", spec)
			}
		})
	}
}

// TestAdmitReportsEveryProblem: one refusal names every problem the
// checks and mutators found, under the first one's status; the validators
// do not run on such a job; the caller's spec is not touched.
func TestAdmitReportsEveryProblem(t *testing.T) {
	f := newAdmission(t).node("n1", 8, 8<<30)
	sent := admissionSpec(func(s *api.JobSpec) {
		s.Nice, s.Umask, s.Partition, s.CPUs = -1, "9", "gpu", 64
	})
	before := sent
	_, err := f.a.admit(sent)
	want := `umask "9" is not an octal mode between 0000 and 0777; only root may give a negative --nice (got -1); ` +
		"partition gpu does not exist (partitions: batch, big)"
	if err == nil || err.Error() != want || fault.KindOf(err) != fault.Invalid {
		t.Fatalf("got %v, want invalid: %q", err, want)
	}
	if !reflect.DeepEqual(sent, before) {
		t.Errorf("the caller's spec changed: %+v", sent)
	}
}

// TestAdmitOneProblemAsBefore: a job with one problem gets exactly that
// problem's error, status included, and an admitted job comes back filled.
func TestAdmitOneProblemAsBefore(t *testing.T) {
	f := newAdmission(t).node("n1", 8, 8<<30)
	_, err := f.a.admit(admissionSpec(func(s *api.JobSpec) { s.Nice = -1 }))
	if fault.KindOf(err) != fault.Forbidden || err.Error() != "only root may give a negative --nice (got -1)" {
		t.Errorf("one problem: %v", err)
	}
	_, err = f.a.admit(admissionSpec(func(s *api.JobSpec) { s.CPUs = 64 }))
	if err == nil || err.Error() != "job asks for 64 CPUs per node but the largest node in partition batch has 8: it could never run" {
		t.Errorf("a validator's problem: %v", err)
	}
	spec, err := f.a.admit(admissionSpec(nil))
	if err != nil || spec.Partition != "batch" || spec.Account != "chem" || spec.Name != "script" || spec.MemBytes != 1<<30 {
		t.Errorf("admitted %+v, %v", spec, err)
	}
}

// TestPlacementNarrowsFit: the fit validator judges only the nodes -x
// leaves: a job that fits only on an excluded node is refused at submit.
func TestPlacementNarrowsFit(t *testing.T) {
	f := newAdmission(t).node("small", 2, 8<<30).node("large", 16, 8<<30)
	_, err := f.a.admit(admissionSpec(func(s *api.JobSpec) { s.CPUs, s.Exclude = 8, []string{"large"} }))
	if err == nil || err.Error() != "job asks for 8 CPUs per node but the largest node in partition batch has 2: it could never run" {
		t.Errorf("8 CPUs with the 16-CPU node excluded: %v", err)
	}
	spec, err := newAdmission(t).node("small", 2, 8<<30).node("large", 16, 8<<30).a.admit(
		admissionSpec(func(s *api.JobSpec) { s.CPUs, s.NodeList = 8, []string{"large"} }))
	if err != nil || spec.Nodes != 1 {
		t.Errorf("8 CPUs on -w large: %+v, %v", spec, err)
	}
}

// TestRefusalKeepsTheFirstKind: several problems answer with the first
// one's fault kind; problems from jobspec are invalid.
func TestRefusalKeepsTheFirstKind(t *testing.T) {
	forbidden := fault.Errorf(fault.Forbidden, "no")
	for _, tt := range []struct {
		problems []error
		kind     fault.Kind
		text     string
	}{
		{[]error{forbidden, errors.New("bad")}, fault.Forbidden, "no; bad"},
		{[]error{errors.New("bad"), forbidden}, fault.Invalid, "bad; no"},
		{[]error{errors.New("bad")}, fault.Invalid, "bad"},
	} {
		if err := refusal(tt.problems); fault.KindOf(err) != tt.kind || err.Error() != tt.text {
			t.Errorf("refusal(%v) = %v, want %v %q", tt.problems, err, tt.kind, tt.text)
		}
	}
	if refusal(nil) != nil {
		t.Error("no problem is no refusal")
	}
}

// TestAdmissionOrder pins the order docs/api.md describes: the spec as
// sent, then the defaults, then the cluster.
func TestAdmissionOrder(t *testing.T) {
	names := func(steps []admissionStep) string {
		var out []string
		for _, st := range steps {
			out = append(out, st.name)
		}
		return strings.Join(out, ", ")
	}
	for _, tt := range []struct {
		steps []admissionStep
		want  string
	}{
		{admissionChecks, "spec, qos, nice, array, dependency, gres, image"},
		{admissionMutators, "partition, sharing, tasks, defaults, placement, account"},
		{admissionValidators, "time limit, fit, mounts, policy"},
	} {
		if got := names(tt.steps); got != tt.want {
			t.Errorf("steps %s, want %s", got, tt.want)
		}
	}
}

// TestSubmitAndTestOnlyAdmitAlike: a submit and a --test-only submit pass
// the same admission, so a job with several problems gets the same one
// answer from both, naming them all, and nothing is stored.
func TestSubmitAndTestOnlyAdmitAlike(t *testing.T) {
	tc := MustServer(t)
	spec := script("many")
	spec.CPUs, spec.OpenMode, spec.Partition = 0, "x", "nosuch"
	want := `cpus must be at least 1 (got 0); invalid --open-mode "x" (valid: append, truncate); partition nosuch does not exist`
	before, _ := tc.srv.store.LastJobID()
	for _, path := range []string{"/v1/jobs", "/v1/jobs/test"} {
		code, body := callAs(t, tc, nobody, "POST", path, api.SubmitRequest{Spec: spec})
		if code != http.StatusBadRequest || !strings.HasPrefix(errorText(t, body), want) {
			t.Errorf("%s: %d %s, want 400 %q...", path, code, body, want)
		}
	}
	if after, _ := tc.srv.store.LastJobID(); after != before {
		t.Errorf("a refused submit stored a job: last ID %d -> %d", before, after)
	}
}
