package jobspec

import (
	"reflect"
	"strings"
	"testing"
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
