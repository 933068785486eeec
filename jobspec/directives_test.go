package jobspec

import (
	"reflect"
	"testing"
)

func TestParseDirectives(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		want   []string
	}{
		{"none", "#!/bin/sh\necho hi\n", nil},
		{"basic", "#!/bin/bash\n#SBATCH -c 4\n#SBATCH --mem=1G\necho\n", []string{"-c", "4", "--mem=1G"}},
		{"corral prefix", "#!/bin/sh\n#CORRAL -J x\n#SBATCH -t 5\n", []string{"-J", "x", "-t", "5"}},
		{"several per line", "#SBATCH -c 2 --mem 4G   -J\tname\n", []string{"-c", "2", "--mem", "4G", "-J", "name"}},
		{"stops at first command", "#SBATCH -c 1\necho hi\n#SBATCH -c 8\n", []string{"-c", "1"}},
		{"blank lines and comments skipped", "\n#!/bin/sh\n\n# a comment\n   \n#SBATCH -c 3\n  # indented comment\n#SBATCH -N 2\nrun\n",
			[]string{"-c", "3", "-N", "2"}},
		{"double hash is a comment", "##SBATCH -c 9\n#SBATCH -c 1\n", []string{"-c", "1"}},
		{"indented directive is a comment", "  #SBATCH -c 9\n#SBATCH -c 1\n", []string{"-c", "1"}},
		{"prefix must end", "#SBATCHX -c 9\n#SBATCH-c 9\n#sbatch -c 9\n#SBATCH -c 1\n", []string{"-c", "1"}},
		{"bare prefix", "#SBATCH\n#SBATCH -c 1\n", []string{"-c", "1"}},
		{"double quotes", `#SBATCH -J "my job" --output="out dir/%j.txt"` + "\n", []string{"-J", "my job", "--output=out dir/%j.txt"}},
		{"single quotes", `#SBATCH -J 'it''s' --wrap 'a "b" c'` + "\n", []string{"-J", "its", "--wrap", `a "b" c`}},
		{"escapes", `#SBATCH -J a\ b "q\"x\\y\n"` + "\n", []string{"-J", "a b", `q"x\y\n`}},
		{"empty quoted word", `#SBATCH -J ""` + "\n", []string{"-J", ""}},
		{"trailing comment", "#SBATCH -c 2 # two cpus\n#SBATCH -J a#b\n", []string{"-c", "2", "-J", "a#b"}},
		{"quoted hash", `#SBATCH -J "#1"` + "\n", []string{"-J", "#1"}},
		{"no trailing newline", "#SBATCH -c 5", []string{"-c", "5"}},
		{"CR stripped", "#SBATCH -c 5\r\necho\r\n", []string{"-c", "5"}},
		{"empty script", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDirectives(tc.script)
			if err != nil {
				t.Fatalf("ParseDirectives: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseDirectivesErrors(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   string
	}{
		{"#!/bin/sh\n#SBATCH -J \"open\n", "line 2: unterminated quote in directive"},
		{"#SBATCH -J 'open\n", "line 1: unterminated quote in directive"},
		{"#SBATCH -c 1\n\n#SBATCH -J \"a\\\"\n", "line 3: unterminated quote in directive"},
	} {
		_, err := ParseDirectives(tc.script)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseDirectives(%q) error = %v, want %q", tc.script, err, tc.want)
		}
	}
}

func TestLateDirectivesAreCounted(t *testing.T) {
	sc, err := scanDirectives("#SBATCH -c 1\necho\n#SBATCH -c 2\n# x\n#SBATCH -c 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc.late, []int{3, 5}) {
		t.Errorf("late = %v, want [3 5]", sc.late)
	}
}
