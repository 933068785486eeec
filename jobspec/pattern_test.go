package jobspec

import "testing"

func TestExpandPattern(t *testing.T) {
	plain := PatternVars{JobID: 42, Name: "train", User: "alice", Node: "dev1", NodeIndex: 0}
	task := PatternVars{JobID: 57, Name: "sweep", User: "bob", Node: "gpu3", ArrayJobID: 50, ArrayTaskID: 7}
	step := PatternVars{JobID: 128, Step: "0", TaskID: 3, NodeIndex: 1, Restarts: 2}
	for _, tc := range []struct {
		in   string
		v    PatternVars
		want string
	}{
		{"", plain, ""},
		{"corral-%j.out", plain, "corral-42.out"},
		{DefaultOutput, plain, "corral-42.out"},
		{"%x-%j-%u-%N-%n.log", plain, "train-42-alice-dev1-0.log"},
		{"100%%", plain, "100%"},
		{"%%j", plain, "%j"},
		{"%%%j", plain, "%42"},
		{"%5j", plain, "00042"},
		{"%1j", plain, "42"},
		{"%03n", plain, "000"},
		{"%005j", plain, "00042"},             // leading zeros of the width do not count
		{"%123j", plain, "0000000042"},        // widths stop at 10, as in Slurm
		{"%10j", plain, "0000000042"},         // the largest width
		{"%5x", plain, "train"},               // width pads numbers only
		{"%q %S %5q %", plain, "%q %S %5q %"}, // unknown letters stay as written
		{"%5%", plain, "%5%"},
		{"%", plain, "%"},
		{"a%5", plain, "a%5"},
		{"/abs/%u/%j", plain, "/abs/alice/42"},
		{"ünïcode-%j", plain, "ünïcode-42"},
		// Arrays: %A is the master job, %a the index, %b the index's last digit.
		{DefaultArrayOutput, task, "corral-50_7.out"},
		{"%x_%A_%3a_%b_%j", task, "sweep_50_007_7_57"},
		{"%A_%a", plain, "42_4294967294"}, // outside an array, as sbatch prints it
		// Steps: the batch script's %J is the job ID, its %s "batch".
		{"%J %s %t %r", plain, "42 batch 0 0"},
		{"job%J.out", step, "job128.0.out"},
		{"job%2j-%2t-%s-%n-%r", step, "job128-03-0-1-2"},
		// A backslash turns expansion off, and is dropped.
		{`out\%j.txt`, plain, "out%j.txt"},
		{`%j\`, plain, "%j"},
	} {
		if got := ExpandPattern(tc.in, tc.v); got != tc.want {
			t.Errorf("ExpandPattern(%q, %+v) = %q, want %q", tc.in, tc.v, got, tc.want)
		}
	}
}
