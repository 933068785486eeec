package slurmopt

import (
	"reflect"
	"testing"
)

var squeueLike = []Option{
	{Short: 'h', Long: "noheader"},
	{Short: 'o', Long: "format", Arg: RequiredArg},
	{Short: 'O', Long: "Format", Arg: RequiredArg},
	{Short: 'n', Long: "name", Arg: RequiredArg},
	{Short: 'j', Long: "jobs", Arg: OptionalArg},
	{Short: 'l', Long: "long"},
	{Long: "start"},
	{Long: "states", Short: 't', Arg: RequiredArg},
	{Long: "steps", Short: 's', Arg: OptionalArg},
	{Long: "sort", Short: 'S', Arg: RequiredArg},
	{Short: 'v'},
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		stop bool
		sets []Set
		rest []string
	}{
		{args: []string{"-h", "-o", "%i %t"}, sets: []Set{{Name: "noheader"}, {"format", "%i %t", true}}},
		{args: []string{"-ho%i"}, sets: []Set{{Name: "noheader"}, {"format", "%i", true}}},
		{args: []string{"-hl"}, sets: []Set{{Name: "noheader"}, {Name: "long"}}},
		{args: []string{"-o%.18i"}, sets: []Set{{"format", "%.18i", true}}},
		{args: []string{"--format=%i", "--Format", "JobID:10"}, sets: []Set{{"format", "%i", true}, {"Format", "JobID:10", true}}},
		{args: []string{"--format="}, sets: []Set{{"format", "", true}}},
		{args: []string{"--form", "%i"}, sets: []Set{{"format", "%i", true}}},           // unique prefix
		{args: []string{"--star"}, sets: []Set{{Name: "start"}}},                        // a unique prefix
		{args: []string{"--start"}, sets: []Set{{Name: "start"}}},                       // exact beats the longer states
		{args: []string{"-j", "12"}, sets: []Set{{Name: "jobs"}}, rest: []string{"12"}}, // optional value only glued
		{args: []string{"-j12,13"}, sets: []Set{{"jobs", "12,13", true}}},
		{args: []string{"--jobs=5"}, sets: []Set{{"jobs", "5", true}}},
		{args: []string{"a", "-h", "b"}, sets: []Set{{Name: "noheader"}}, rest: []string{"a", "b"}}, // permuted
		{args: []string{"a", "-h", "b"}, stop: true, rest: []string{"a", "-h", "b"}},
		{args: []string{"-h", "--", "-o", "x"}, sets: []Set{{Name: "noheader"}}, rest: []string{"-o", "x"}},
		{args: []string{"-"}, rest: []string{"-"}},
		{args: []string{"-v", "-v"}, sets: []Set{{Name: "v"}, {Name: "v"}}},
	} {
		r, err := Parse(squeueLike, tc.args, tc.stop)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(r.Sets, tc.sets) || !reflect.DeepEqual(r.Args, tc.rest) {
			t.Errorf("%q: got sets %+v args %q, want %+v %q", tc.args, r.Sets, r.Args, tc.sets, tc.rest)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--foo"}, "unrecognized option '--foo'"},
		{[]string{"--foo=1"}, "unrecognized option '--foo'"},
		{[]string{"-z"}, "invalid option -- 'z'"},
		{[]string{"-hz"}, "invalid option -- 'z'"},
		{[]string{"-o"}, "option requires an argument -- 'o'"},
		{[]string{"--format"}, "option '--format' requires an argument"},
		{[]string{"--noheader=1"}, "option '--noheader' doesn't allow an argument"},
		{[]string{"--s"}, "option '--s' is ambiguous; possibilities: '--sort' '--start' '--states' '--steps'"},
		{[]string{"--st"}, "option '--st' is ambiguous; possibilities: '--start' '--states' '--steps'"},
		{[]string{"--sta"}, "option '--sta' is ambiguous; possibilities: '--start' '--states'"},
	} {
		_, err := Parse(squeueLike, tc.args, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestResultAccessors(t *testing.T) {
	r, err := Parse(squeueLike, []string{"-n", "a", "--name=b", "-h"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.Last("name"); !ok || v != "b" {
		t.Errorf("Last(name) = %q %v", v, ok)
	}
	if got := r.All("name"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("All(name) = %q", got)
	}
	if !r.Has("noheader") || r.Has("long") {
		t.Errorf("Has: noheader %v long %v", r.Has("noheader"), r.Has("long"))
	}
}
