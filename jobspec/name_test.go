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
		{"train", true}, {"resnet-50_v2.1", true}, {"a", true}, {strings.Repeat("x", MaxJobName), true},
		{"lr=0.1 run:v2", true}, {"a+b/c", true}, {"two words", true}, {"semi;colon", true},
		{"dollar$", true}, {"ünïcode", true},
		{"", false}, {strings.Repeat("x", MaxJobName+1), false}, {"tab\tname", false},
		{"new\nline", false}, {"bell\a", false}, {"bad\xffutf8", false},
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
	if _, err := Parse([]string{"-J", strings.Repeat("x", MaxJobName+1), "--wrap", "true"}, nil); err == nil ||
		!strings.Contains(err.Error(), "1 to 1024 bytes of printable text") {
		t.Errorf("refusal does not say what is allowed: %v", err)
	}
}

func TestDefaultJobName(t *testing.T) {
	if got := DefaultJobName("my job (copy).sh"); got != "my job (copy).sh" {
		t.Errorf("a valid script name became %q", got)
	}
	shape := regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9]{4}$`)
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		n := DefaultJobName("bad\nname.sh")
		if !shape.MatchString(n) || !ValidJobName(n) {
			t.Fatalf("random name %q", n)
		}
		seen[n] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 random names gave only %d distinct ones", len(seen))
	}
}
