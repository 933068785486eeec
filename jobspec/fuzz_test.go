package jobspec

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The seed corpora below run as ordinary tests in `go test`; use
// `go test -fuzz=FuzzParseSize ./jobspec` and friends to explore further.

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512", "1K", "4gb", "1.5G", "2TiB", "12Q", "", ".", "1.", "-1", "8388608T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d < 0", s, n)
		}
		// Suffixes are case-insensitive.
		for _, variant := range []string{strings.ToUpper(s), strings.ToLower(s)} {
			if m, err := ParseSize(variant); err != nil || m != n {
				t.Fatalf("ParseSize(%q) = %d, %v but ParseSize(%q) = %d", variant, m, err, s, n)
			}
		}
	})
}

func FuzzParseTimeLimit(f *testing.F) {
	for _, s := range []string{"0", "5", "5:30", "1:02:03", "2-3", "2-3:04", "2-03:04:05", "UNLIMITED", "1:2:3:4", "-", "1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseTimeLimit(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseTimeLimit(%q) = %d < 0", s, n)
		}
		// Whatever was accepted prints and reads back to the same value.
		back, err := ParseTimeLimit(FormatDuration(n))
		if err != nil || back != n {
			t.Fatalf("ParseTimeLimit(FormatDuration(%d)=%q) = %d, %v", n, FormatDuration(n), back, err)
		}
	})
}

func FuzzParseDirectives(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\n#SBATCH -c 4 --mem=1G\necho\n",
		"#SBATCH -J \"a b\" 'c d' e\\ f # comment\n",
		"#SBATCH -J \"open\n",
		"##SBATCH -c 1\n  #SBATCH -c 2\n#CORRAL -t 5\n",
		"\r\n#SBATCH\r\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		args, err := ParseDirectives(script)
		// Nothing after the first command can change the directives.
		more, err2 := ParseDirectives(script + "\necho stop\n#SBATCH --late 'x\n")
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(args, more) {
			t.Fatalf("trailing commands changed the result: %q, %v vs %q, %v", args, err, more, err2)
		}
		if err != nil {
			return
		}
		// Whatever the directives say, Parse turns them into a spec or one
		// clear line; it never panics.
		_, perr := Parse([]string{"job.sh"}, newScripts("job.sh", script).read)
		if perr != nil && strings.Contains(perr.Error(), "\n") {
			t.Fatalf("Parse error spans lines: %q", perr)
		}
	})
}

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"0-15", "1,3,5", "0-15:4", "0-15%4", "0,6,16-32", "3,3", "1-3,5-9:2", "0-4000000:999999",
		"", "%", "15-0", "5:2", "0-15:0", "1,,2", "4000001", "0-15%0", "-1", "1-2-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, dup, err := ParseArray(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		n := a.Count()
		if n < 1 || n > MaxArrayIndex+1 || a.MaxRunning < 0 {
			t.Fatalf("ParseArray(%q) = %+v: count %d", s, a, n)
		}
		prev := -1
		for _, r := range a.Ranges {
			if r.Step < 1 || r.First > r.Last || (r.Last-r.First)%r.Step != 0 || r.First <= prev || r.Last > MaxArrayIndex {
				t.Fatalf("ParseArray(%q): bad range %+v after index %d", s, r, prev)
			}
			prev = r.Last
		}
		if dup >= 0 && !slices.Contains(a.Indexes(), dup) {
			t.Fatalf("ParseArray(%q): duplicate %d is not an index", s, dup)
		}
		// The canonical form reads back to the same array, without
		// duplicates.
		back, dup2, err := ParseArray(FormatArray(a))
		if err != nil || dup2 != -1 || !reflect.DeepEqual(back, a) {
			t.Fatalf("ParseArray(FormatArray(%+v) = %q) = %+v, %d, %v", a, FormatArray(a), back, dup2, err)
		}
	})
}

func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{"afterok:20:21,afterany:23", "afterok:20?afternotok:21", "after:5+10:6", "singleton",
		"afterok:9_[1-3,7]", "afterany:7_*", "12,13", "afterburstbuffer:8", "0", "", "afterok:1,afterany:2?x:3",
		"singleton:4", "afterok:5+10", "after:5+0", "aftercorr:1_2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, _, err := ParseDependency(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if (d == nil) != (s == "" || s == "0") {
			t.Fatalf("ParseDependency(%q) = %+v", s, d)
		}
		if d == nil {
			return
		}
		if len(d.Conditions) == 0 || len(d.Conditions) > MaxDependencies {
			t.Fatalf("ParseDependency(%q): %d conditions", s, len(d.Conditions))
		}
		for _, c := range d.Conditions {
			if (c.JobID == 0) != (c.Type == api.DependSingleton) || c.Delay < 0 || c.Delay > 0 && c.Type != api.DependAfter {
				t.Fatalf("ParseDependency(%q): bad condition %+v", s, c)
			}
		}
		back, bb, err := ParseDependency(FormatDependency(d))
		if err != nil || bb || !reflect.DeepEqual(back, d) {
			t.Fatalf("ParseDependency(FormatDependency(%+v) = %q) = %+v, %v, %v", d, FormatDependency(d), back, bb, err)
		}
	})
}

func FuzzParseBegin(f *testing.F) {
	for _, s := range []string{"16:00", "now+1hour", "now + 2 days", "now-5minutes", "midnight", "noon", "teatime tomorrow",
		"4:30pm", "2026-01-20T12:34:00", "12/24-18:00", "122426", "0229", "uts1800000000", "today", "25:00", "now+",
		"tomorrow today", "2026-02-30"} {
		f.Add(s, int64(0))
		f.Add(s, int64(86399))
	}
	f.Fuzz(func(t *testing.T, s string, offset int64) {
		// now moves over about a century, on whole seconds.
		now := testNow.Add(time.Duration(offset%(100*366*86400)) * time.Second)
		got, err := ParseBegin(s, now)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if again, _ := ParseBegin(s, now); !again.Equal(got) {
			t.Fatalf("ParseBegin(%q) is not deterministic: %v then %v", s, got, again)
		}
		if got.Location() != now.Location() {
			t.Fatalf("ParseBegin(%q) = %v, not in now's location", s, got)
		}
		if got.Year() < 1970 || got.Year() > 9999 {
			return // now-100years and the like: no date form spells it
		}
		// An absolute spelling of the result reads back to the same time.
		abs := got.Format("2006-01-02T15:04:05")
		if back, err := ParseBegin(abs, now); err != nil || !back.Equal(got) {
			t.Fatalf("ParseBegin(%q) = %v, but ParseBegin(%q) = %v, %v", s, got, abs, back, err)
		}
	})
}
