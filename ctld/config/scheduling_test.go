package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/priority"
	"github.com/corral-hpc/corral/sched"
)

const partitionLine = "PartitionName=batch Nodes=ALL\n"

// mustParseFile parses text after a partition line, failing the test on error.
func mustParseFile(t *testing.T, text string) *File {
	t.Helper()
	f, err := ParseFile(strings.NewReader(partitionLine+text), "corral.conf")
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	return f
}

func TestSchedulingDefaults(t *testing.T) {
	f := mustParseFile(t, "")
	want := DefaultScheduling()
	if !reflect.DeepEqual(f.Scheduling, want) {
		t.Fatalf("defaults %+v, want %+v", f.Scheduling, want)
	}
	if want.Planner != (sched.Backfill{Mode: sched.EASY, Order: sched.RankedWFP, ReserveOldest: 2, ReserveOldestAfter: 10 * time.Minute}) || want.Basic ||
		want.Priority.Weights != (priority.Weights{Fairshare: 10000, Age: 1000, Size: 100}) ||
		want.Priority.Algorithm != priority.FairTree || want.Priority.MaxAge != 12*time.Hour ||
		want.Priority.Decay.HalfLife != 7*24*time.Hour || want.Priority.Decay.ResetPeriod != 0 ||
		want.Priority.Billing != (priority.BillingWeights{CPU: 1, MemGiB: 0.25, GPU: 2}) || want.Priority.FavorSmall {
		t.Fatalf("DefaultScheduling() = %+v", want)
	}
}

// Without a file the controller runs on the defaults: a file with only a
// partition of every node gives the same.
func TestLoadWithoutFile(t *testing.T) {
	f, err := LoadOrDefaults("")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Partitions, Default()) || !reflect.DeepEqual(f.Scheduling, DefaultScheduling()) {
		t.Fatalf("LoadOrDefaults(\"\") = %+v", f)
	}
}

func TestSchedulingKeys(t *testing.T) {
	f := mustParseFile(t, `
PriorityType=priority/multifactor PriorityWeightFairshare=5000 PriorityWeightAge=200
priorityweightjobsize=7 PriorityMaxAge=1-0 PriorityDecayHalfLife=2:00:00
PriorityUsageResetPeriod=WEEKLY PriorityFavorSmall=YES FairshareAlgorithm=classic
TRESBillingWeights=CPU=2,Mem=512M,GRES/gpu=4.5   # per MiB suffix
SchedulerType=sched/backfill BackfillMode=EASY BackfillDepth=50
BackfillOrder=Shortest BackfillReserveOldest=0 BackfillReserveOldestAfter=0 BackfillGuardAfter=2:00:00
`)
	p := f.Scheduling.Priority
	switch {
	case p.Weights != priority.Weights{Fairshare: 5000, Age: 200, Size: 7}:
		t.Errorf("weights %+v", p.Weights)
	case p.MaxAge != 24*time.Hour || p.Decay.HalfLife != 2*time.Hour || p.Decay.ResetPeriod != 7*24*time.Hour:
		t.Errorf("ages %v %+v", p.MaxAge, p.Decay)
	case !p.FavorSmall || p.Algorithm != priority.Classic:
		t.Errorf("favor small %v, algorithm %s", p.FavorSmall, p.Algorithm)
	case p.Billing != priority.BillingWeights{CPU: 2, MemGiB: 512 * 1024, GPU: 4.5}:
		t.Errorf("billing %+v", p.Billing)
	case f.Scheduling.Planner != sched.Backfill{Mode: sched.EASY, Depth: 50, Order: sched.ShortestFirst, GuardAfter: 2 * time.Hour}:
		t.Errorf("planner %+v", f.Scheduling.Planner)
	}
	for _, tc := range []struct {
		text  string
		check func(Scheduling) bool
	}{
		{"PriorityType=basic\n", func(s Scheduling) bool { return s.Basic }},
		{"PriorityDecayHalfLife=0\n", func(s Scheduling) bool { return s.Priority.Decay.HalfLife < 0 }},
		{"SchedulerType=fcfs\n", func(s Scheduling) bool { return s.Planner.Mode == sched.FCFS }},
		{"SchedulerType=backfill\n", func(s Scheduling) bool { return s.Planner.Mode == sched.EASY }},
		{"PriorityMaxAge=2-0\n", func(s Scheduling) bool { return s.Planner.GuardAfter == 0 && s.Priority.MaxAge == 48*time.Hour }},
		{"BackfillGuardAfter=1:00:00 PriorityMaxAge=2-0\n", func(s Scheduling) bool { return s.Planner.GuardAfter == time.Hour }},
		{"BackfillReserveOldest=3\n", func(s Scheduling) bool { return s.Planner.ReserveOldest == 3 }},
		{"BackfillReserveOldestAfter=10:00\n", func(s Scheduling) bool { return s.Planner.ReserveOldestAfter == 10*time.Minute }},
		{"BackfillOrder=rwfp\n", func(s Scheduling) bool { return s.Planner.Order == sched.RankedWFP }},
		{"BackfillPack=32 BackfillPackFill=YES\n", func(s Scheduling) bool { return s.Planner.Pack == 32 && s.Planner.PackFill }},
		{"BackfillPackFill=no\nBackfillPack=8\n", func(s Scheduling) bool { return s.Planner.Pack == 8 && !s.Planner.PackFill }},
		{"BackfillPack=0\n", func(s Scheduling) bool { return s.Planner.Pack == 0 && s.Planner == sched.DefaultBackfill() }},
		{"BackfillMode=conservative\n", func(s Scheduling) bool {
			return s.Planner.Mode == sched.Conservative && s.Planner.ReserveOldest == 2
		}},
		{"TRESBillingWeights=Mem=0.25G\n", func(s Scheduling) bool {
			return s.Priority.Billing == priority.BillingWeights{MemGiB: 0.25}
		}},
		{"TRESBillingWeights=CPU=1,Mem=1T\n", func(s Scheduling) bool {
			return s.Priority.Billing == priority.BillingWeights{CPU: 1, MemGiB: 1.0 / 1024}
		}},
		{"PriorityUsageResetPeriod=none\n", func(s Scheduling) bool { return s.Priority.Decay.ResetPeriod == 0 }},
		{"PriorityUsageResetPeriod=MONTHLY\n", func(s Scheduling) bool { return s.Priority.Decay.ResetPeriod == 30*24*time.Hour }},
	} {
		if got := mustParseFile(t, tc.text).Scheduling; !tc.check(got) {
			t.Errorf("%q gave %+v", tc.text, got)
		}
	}
}

func TestShareTreeLines(t *testing.T) {
	f := mustParseFile(t, `
UserName=alice DefaultAccount=physics Accounts=chem,physics Fairshare=3
AccountName=physics Parent=root Fairshare=2
AccountName=chem
AccountName=theory Parent=physics
UserName=bob Accounts=theory
`)
	p := f.Scheduling.Priority
	wantAccts := []priority.Account{{Name: "physics", Shares: 2}, {Name: "chem"}, {Name: "theory", Parent: "physics"}}
	wantUsers := []priority.User{{Name: "alice", Account: "physics", Shares: 3}, {Name: "alice", Account: "chem", Shares: 3},
		{Name: "bob", Account: "theory"}}
	if !reflect.DeepEqual(p.Accounts, wantAccts) || !reflect.DeepEqual(p.Users, wantUsers) {
		t.Fatalf("accounts %+v\nusers %+v", p.Accounts, p.Users)
	}
	// alice's default is her DefaultAccount, not the first of Accounts.
	c, err := priority.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tree().Resolve("alice", ""); got.Account != "physics" {
		t.Errorf("alice's default account %q", got.Account)
	}
	if got := c.Tree().Resolve("carol", ""); got.Account != priority.DefaultAccountName {
		t.Errorf("an unlisted user's account %q", got.Account)
	}
}

func TestSchedulingErrors(t *testing.T) {
	tests := []struct{ text, wantErr string }{
		{"PriorityWeightAge=-1\n", "corral.conf:2: PriorityWeightAge=-1: use a whole number from 0 to 4294967295"},
		{"PriorityWeightAge=1 PriorityWeightAge=2\n", "corral.conf:2: PriorityWeightAge is given twice"},
		{"PriorityWeightAge=1\n\nPriorityWeightAge=2\n", "corral.conf:4: PriorityWeightAge is already set on line 2"},
		{"PriorityWeigthAge=1\n", "corral.conf:2: unknown key PriorityWeigthAge (a line starts with PartitionName, NodeName, AccountName, UserName, ResourceTemplate, or holds scheduling keys:"},
		{"PriorityType=multifactor Nodes=ALL\n", "corral.conf:2: unknown key Nodes on a scheduling line"},
		{"PriorityType=fancy\n", "PriorityType=fancy: use multifactor or basic"},
		{"PriorityMaxAge=0\n", "PriorityMaxAge=0: the maximum age must be more than 0"},
		{"PriorityMaxAge=soon\n", `PriorityMaxAge=soon: invalid time limit "soon"`},
		{"PriorityUsageResetPeriod=HOURLY\n", "PriorityUsageResetPeriod=HOURLY: use NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY"},
		{"PriorityFavorSmall=maybe\n", "PriorityFavorSmall=maybe: use YES or NO"},
		{"FairshareAlgorithm=lottery\n", "FairshareAlgorithm=lottery: use fair_tree or classic"},
		{"TRESBillingWeights=CPU=1,Disk=2\n", "TRESBillingWeights=CPU=1,Disk=2: unknown resource Disk (valid: CPU, Mem, GRES/gpu)"},
		{"TRESBillingWeights=CPU=-1\n", `TRESBillingWeights=CPU=-1: CPU: invalid weight "-1"`},
		{"TRESBillingWeights=CPU=0\n", "every weight is 0"},
		{"TRESBillingWeights=CPU\n", `"CPU" is not RESOURCE=WEIGHT`},
		{"SchedulerType=sched/wiki\n", "SchedulerType=sched/wiki: use backfill or fcfs"},
		{"BackfillMode=greedy\n", `unknown backfill mode "greedy"`},
		{"SchedulerType=fcfs BackfillMode=easy\n", "BackfillMode=easy: SchedulerType=fcfs does not backfill"},
		{"BackfillMode=easy SchedulerType=fcfs\n", "SchedulerType=fcfs: BackfillMode is set too, but fcfs does not backfill"},
		{"BackfillDepth=-3\n", "BackfillDepth=-3: use a whole number of jobs, 0 for the whole queue"},
		{"BackfillReserveOldest=-1\n", "BackfillReserveOldest=-1: use a whole number of jobs per partition, 0 to reserve for the top job by priority"},
		{"BackfillOrder=random\n", `BackfillOrder=random: unknown backfill order "random" (valid: priority, shortest, area, slowdown, wfp, rwfp)`},
		{"BackfillGuardAfter=soon\n", "BackfillGuardAfter=soon: "},
		{"BackfillPack=-1\n", "BackfillPack=-1: use a whole number of candidates from 0 (off) to 1024"},
		{"BackfillPack=5000\n", "BackfillPack=5000: use a whole number of candidates from 0 (off) to 1024"},
		{"BackfillPackFill=sometimes\n", "BackfillPackFill=sometimes: use YES or NO"},
		{"BackfillPackFill=YES\n", "corral.conf:2: BackfillPackFill=YES needs BackfillPack=N, the number of candidates it chooses among"},
		{"BackfillPack=8\nBackfillMode=conservative\n", "corral.conf:2: BackfillPack chooses among easy's backfill candidates; it needs BackfillMode=easy"},
		{"SchedulerType=fcfs\nBackfillPack=8\n", "corral.conf:3: BackfillPack chooses among easy's backfill candidates; it needs BackfillMode=easy"},
		{"AccountName=a Colour=red\n", "corral.conf:2: unknown key Colour on a AccountName line (valid: AccountName, Parent, Fairshare)"},
		{"AccountName=a\nAccountName=a\n", "corral.conf:3: account a is already defined on line 2"},
		{"AccountName=root\n", "AccountName=root: root is the tree's root"},
		{"AccountName=a Fairshare=0\n", "Fairshare=0: use a number of shares above 0"},
		{"AccountName=a Parent=zz\n", "corral.conf:2: account a: parent account zz is not defined"},
		{"AccountName=a Parent=b\nAccountName=b Parent=a\n", "form a cycle"},
		{"UserName=alice\n", "corral.conf:2: user alice: give DefaultAccount= or Accounts="},
		{"UserName=alice Accounts=physics\n", "corral.conf:2: user alice: account physics is not defined (add an AccountName=physics line)"},
		{"AccountName=a\nUserName=u Accounts=a\nUserName=u Accounts=a\n", "corral.conf:4: user u is already defined on line 3"},
		{"UserName=a,b Accounts=x\n", `invalid UserName "a,b"`},
	}
	for _, tt := range tests {
		_, err := ParseFile(strings.NewReader(partitionLine+tt.text), "corral.conf")
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseFile(%q) error = %v, want one containing %q", tt.text, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFile(%q) error spans lines: %q", tt.text, err)
		}
	}
}

func TestSchedulingLinesNeedPartitions(t *testing.T) {
	_, err := ParseFile(strings.NewReader("PriorityWeightAge=5\n"), "corral.conf")
	if err == nil || !strings.Contains(err.Error(), "no partitions defined") {
		t.Fatalf("error = %v", err)
	}
}
