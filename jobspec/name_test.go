package jobspec

import (
	"regexp"
	"strings"
	"testing"
)

func TestJobNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"train", true}, {"resnet-50_v2.1", true}, {"a", true}, {strings.Repeat("x", 64), true},
		{"", false}, {strings.Repeat("x", 65), false}, {"two words", false}, {"a/b", false},
		{"semi;colon", false}, {"dollar$", false}, {"ünïcode", false}, {"tab\tname", false},
	}
	for _, tc := range tests {
		if got := ValidJobName(tc.name); got != tc.ok {
			t.Errorf("ValidJobName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
		_, err := Parse([]string{"-J", tc.name, "--wrap", "true"}, nil)
		if (err == nil) != tc.ok {
			t.Errorf("-J %q: err %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("-J %q: error is not one line: %q", tc.name, err)
		}
	}
	if _, err := Parse([]string{"-J", "two words", "--wrap", "true"}, nil); err == nil ||
		!strings.Contains(err.Error(), "letters, digits, '.', '_' and '-'") {
		t.Errorf("refusal does not say what is allowed: %v", err)
	}
}

func TestDefaultJobName(t *testing.T) {
	if got := DefaultJobName("train.sh"); got != "train.sh" {
		t.Errorf("a valid script name became %q", got)
	}
	shape := regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9]{4}$`)
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		n := DefaultJobName("my job (copy).sh")
		if !shape.MatchString(n) || !ValidJobName(n) {
			t.Fatalf("random name %q", n)
		}
		seen[n] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 random names gave only %d distinct ones", len(seen))
	}
}
