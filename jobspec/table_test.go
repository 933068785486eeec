package jobspec

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sbatchOptions is every long option of sbatch in Slurm 26.11 (the man
// page plus the hidden aliases in src/common/slurm_opt.c), with its short
// form.
var sbatchOptions = map[string]byte{
	"account": 'A', "acctg-freq": 0, "array": 'a', "autocomplete": 0, "batch": 0, "bb": 0, "bbf": 0,
	"begin": 'b', "chdir": 'D', "cluster": 0, "cluster-constraint": 0, "clusters": 'M', "comment": 0,
	"consolidate-segments": 0, "constraint": 'C', "container": 0, "container-id": 0, "context": 0,
	"contiguous": 0, "core-spec": 'S', "cores-per-socket": 0, "cpu-freq": 0, "cpus-per-gpu": 0,
	"cpus-per-task": 'c', "deadline": 0, "delay-boot": 0, "dependency": 'd', "distribution": 'm',
	"error": 'e', "exclude": 'x', "exclusive": 0, "export": 0, "export-file": 0, "external": 0, "extra": 0,
	"extra-node-info": 'B', "get-user-env": 0, "gid": 0, "gpu-bind": 0, "gpu-freq": 0, "gpus": 'G',
	"gpus-per-node": 0, "gpus-per-socket": 0, "gpus-per-task": 0, "gres": 0, "gres-flags": 0, "help": 'h',
	"hint": 0, "hold": 'H', "ignore-pbs": 0, "input": 'i', "job-name": 'J', "kill-on-invalid-dep": 0,
	"licenses": 'L', "mail-type": 0, "mail-user": 0, "mcs-label": 0, "mem": 0, "mem-bind": 0,
	"mem-per-cpu": 0, "mem-per-gpu": 0, "mem-update": 0, "mincpus": 0, "network": 0, "nice": 0,
	"no-kill": 'k', "no-requeue": 0, "nodefile": 'F', "nodelist": 'w', "nodes": 'N', "ntasks": 'n',
	"ntasks-per-core": 0, "ntasks-per-gpu": 0, "ntasks-per-node": 0, "ntasks-per-socket": 0,
	"ntasks-per-tres": 0, "oom-kill-step": 0, "open-mode": 0, "output": 'o', "overcommit": 'O',
	"oversubscribe": 's', "parsable": 0, "partition": 'p', "prefer": 0, "priority": 0, "profile": 0,
	"propagate": 0, "qos": 'q', "quiet": 'Q', "reboot": 0, "requeue": 0, "reservation": 0, "resources": 0,
	"resv-ports": 0, "runtime": 0, "segment": 0, "signal": 0, "sockets-per-node": 0, "spread-job": 0,
	"spread-segments": 0, "stepmgr": 0, "switches": 0, "tasks-per-node": 0, "test-only": 0,
	"thread-spec": 0, "threads-per-core": 0, "time": 't', "time-min": 0, "tmp": 0, "tres-bind": 0,
	"tres-per-task": 0, "uid": 0, "usage": 0, "use-min-nodes": 0, "verbose": 'v', "version": 'V',
	"wait": 'W', "wait-all-nodes": 0, "wckey": 0, "wrap": 0,
}

func TestTableHasEverySbatchOption(t *testing.T) {
	if n := len(sbatchOptions); n != 120 {
		t.Fatalf("the list above has %d options, sbatch has 120", n)
	}
	for i, o := range options {
		short, isSbatch := sbatchOptions[o.long]
		switch {
		case i > 0 && options[i-1].long >= o.long:
			t.Errorf("table not sorted: --%s after --%s", o.long, options[i-1].long)
		case isSbatch == o.corral:
			t.Errorf("--%s: corral = %v, but sbatch has it = %v", o.long, o.corral, isSbatch)
		case isSbatch && o.short != short:
			t.Errorf("--%s: short -%c, sbatch's is -%c", o.long, o.short, short)
		case (o.ignore != "") == (o.apply != nil):
			t.Errorf("--%s must have exactly one of ignore and apply", o.long)
		case o.optionalArg && o.arg == "":
			t.Errorf("--%s: an optional value needs a placeholder", o.long)
		case strings.Contains(o.ignore, "\n") || strings.Contains(o.help, "\n"):
			t.Errorf("--%s: help or reason spans lines", o.long)
		}
	}
	for name := range sbatchOptions {
		if optionByName(name) == nil {
			t.Errorf("sbatch's --%s is not in the table", name)
		}
	}
}

// Every ignored option is accepted, in a script and on the command line,
// with exactly one warning that names it and says why.
func TestIgnoredOptionsWarnOnce(t *testing.T) {
	for _, o := range options {
		if o.ignore == "" {
			continue
		}
		arg := "--" + o.long
		switch {
		case o.check != nil: // a value it takes
			arg += "=" + ignoredSamples[o.long]
		case o.arg != "":
			arg += "=x"
		}
		script := "#!/bin/sh\n#SBATCH " + arg + "\n#SBATCH " + arg + "\ntrue\n"
		if o.commandLineOnly {
			script = plain
		}
		r, err := ParseAt([]string{arg, "job.sh"}, newScripts("job.sh", script).read, testNow)
		if err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		want := []string{"--" + o.long + " is ignored: " + o.ignore}
		if !reflect.DeepEqual(r.Warnings, want) {
			t.Errorf("%s: warnings %q, want %q", arg, r.Warnings, want)
		}
		base := MustParseArgs(t)
		r.Spec.Script = base.Spec.Script
		if !reflect.DeepEqual(r.Spec, base.Spec) {
			t.Errorf("%s changed the spec: %+v", arg, r.Spec)
		}
	}
}

// ignoredSamples is a value each ignored option that checks its value
// takes; TestIgnoredValuesChecked has one it refuses.
var ignoredSamples = map[string]string{"mail-type": "END,fail"}

// An ignored option that checks its value refuses one sbatch refuses.
func TestIgnoredValuesChecked(t *testing.T) {
	for name := range ignoredSamples {
		if o := optionByName(name); o == nil || o.check == nil {
			t.Errorf("--%s should check its value", name)
		}
	}
	for _, o := range options {
		if o.check == nil {
			continue
		}
		if _, ok := ignoredSamples[o.long]; !ok {
			t.Errorf("--%s checks its value but has no sample", o.long)
		}
		if _, err := ParseAt([]string{"--" + o.long + "=BOGUS", "job.sh"}, newScripts("job.sh", plain).read, testNow); err == nil {
			t.Errorf("--%s=BOGUS: accepted", o.long)
		}
	}
}

// supportedSamples is a value for each supported option; every one must
// change the parsed request, so no supported option is silently dropped.
var supportedSamples = map[string]string{
	"account": "proj", "app": "jupyter=8888", "array": "1-3", "begin": "now+1hour", "chdir": "/tmp", "comment": "hi",
	"constraint": "a100", "container-image": "ubuntu:24.04", "cpus-per-gpu": "4", "cpus-per-task": "3",
	"dependency": "afterok:1", "exclude": "dev1", "nodelist": "dev[1-2]", "nodefile": "testdata/nodefile", "error": "e.txt", "exclusive": "", "export": "NONE", "fgpu": "0.5", "gpus": "2",
	"gpus-per-node": "2", "gpus-per-task": "1", "gres": "gpu:1", "help": "", "hold": "", "image": "tf:2.2", "input": "in.txt",
	"job-name": "n", "kill-on-invalid-dep": "yes", "mem": "1G", "mem-per-cpu": "1G", "mem-per-gpu": "1G",
	"mincpus": "4", "mount": "/a:/b", "nice": "", "no-requeue": "", "nodes": "2", "ntasks": "2",
	"ntasks-per-node": "2", "open-mode": "append", "output": "o.txt", "oversubscribe": "", "parsable": "", "partition": "p",
	"qos": "high", "quiet": "", "requeue": "", "shm": "1G", "signal": "USR1", "socket": "/s",
	"tasks-per-node": "2", "test-only": "", "time": "10", "uid": "bob", "usage": "", "version": "",
	"wait": "", "wrap": "true",
}

// companions are options a sample needs to be valid on its own.
var companions = map[string][]string{
	"cpus-per-gpu": {"--gpus=1"}, "mem-per-gpu": {"--gpus=1"},
}

func TestEverySupportedOptionHasAnEffect(t *testing.T) {
	base := MustParseArgs(t)
	for _, o := range options {
		if o.apply == nil {
			continue
		}
		v, ok := supportedSamples[o.long]
		if !ok {
			t.Errorf("--%s has no sample value in supportedSamples", o.long)
			continue
		}
		arg := "--" + o.long
		if o.arg != "" && (v != "" || !o.optionalArg) {
			arg += "=" + v
		}
		args := append(slices.Clone(companions[o.long]), arg)
		if o.long != "wrap" {
			args = append(args, "job.sh")
		}
		r, err := ParseAt(args, newScripts("job.sh", plain).read, testNow)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if len(companions[o.long]) == 0 && reflect.DeepEqual(r, base) {
			t.Errorf("%q changed nothing", args)
		}
		if len(r.Warnings) != 0 {
			t.Errorf("%q warned: %q", args, r.Warnings)
		}
	}
}

func TestOptionsExport(t *testing.T) {
	all := Options()
	if len(all) != len(options) || !sort.SliceIsSorted(all, func(a, b int) bool { return all[a].Long < all[b].Long }) {
		t.Fatalf("Options() has %d rows, the table %d", len(all), len(options))
	}
	mail := all[slices.IndexFunc(all, func(o Option) bool { return o.Long == "mail-type" })]
	if mail.Ignored != "this cluster sends no mail" || mail.Arg != "TYPE" {
		t.Errorf("mail-type = %+v", mail)
	}
	all[0].Values = append(all[0].Values, "changed")
	if slices.Contains(Options()[0].Values, "changed") {
		t.Error("Options() shares its slices with the table")
	}
}

// Optional values follow getopt: attached only.
func TestOptionalValues(t *testing.T) {
	s := newScripts("job.sh", plain, "5", plain)
	for _, tc := range []struct {
		args   []string
		nice   int
		script string
	}{
		{[]string{"--nice", "job.sh"}, 100, "job.sh"},
		{[]string{"--nice=5", "job.sh"}, 5, "job.sh"},
		{[]string{"--nice=-7", "job.sh"}, -7, "job.sh"},
		{[]string{"--nice", "5"}, 100, "5"}, // 5 is the script, not the value
	} {
		r, err := ParseAt(tc.args, s.read, testNow)
		if err != nil || r.Spec.Nice != tc.nice || r.ScriptPath != tc.script {
			t.Errorf("%q: nice %v, script %q, %v; want %d, %q", tc.args, r.Spec.Nice, r.ScriptPath, err, tc.nice, tc.script)
		}
	}
	r, err := ParseAt([]string{"-koff", "-k", "job.sh"}, s.read, testNow)
	if err != nil || !reflect.DeepEqual(r.Warnings, []string{"--no-kill is ignored: corral ends the job when one of its nodes fails"}) {
		t.Errorf("-koff -k: %v, %q", err, r.Warnings)
	}
	for _, tc := range []struct{ arg, want string }{
		{"--exclusive", "node"}, {"--exclusive=user", "user"}, {"--exclusive=USER", "user"},
		{"--exclusive=allocation", "node"}, {"--exclusive=oversubscribe", ""},
	} {
		r := MustParseArgs(t, tc.arg)
		if r.Spec.Exclusive != tc.want {
			t.Errorf("%s: Exclusive = %q, want %q", tc.arg, r.Spec.Exclusive, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want *bool
	}{
		{[]string{"--requeue"}, boolPtr(true)}, {[]string{"--no-requeue"}, boolPtr(false)},
		{[]string{"--requeue", "--no-requeue"}, boolPtr(false)}, {[]string{"--no-requeue", "--requeue"}, boolPtr(true)},
		{nil, nil},
	} {
		r := MustParseArgs(t, tc.args...)
		if !reflect.DeepEqual(r.Spec.Requeue, tc.want) {
			t.Errorf("%q: Requeue = %v", tc.args, r.Spec.Requeue)
		}
	}
}
