package config

import (
	"strings"
	"testing"
)

func TestStepLines(t *testing.T) {
	if got := mustParseFile(t, "MpiDefault=pmi2\n").Steps.MpiDefault; got != "pmi2" {
		t.Errorf("MpiDefault=pmi2 read as %q", got)
	}
	if got := mustParseFile(t, "MpiDefault=none\n").Steps.MpiDefault; got != "" {
		t.Errorf("MpiDefault=none read as %q", got)
	}
	if got := mustParseFile(t, "").Steps.MpiDefault; got != "" {
		t.Errorf("no MpiDefault read as %q", got)
	}
	for text, want := range map[string]string{
		"MpiDefault=pmix\n":                  "corral.conf:2: MpiDefault=pmix: use none or pmi2",
		"MpiDefault=pmi2 JobRequeue=1\n":     "corral.conf:2: unknown key JobRequeue on a step line",
		"MpiDefault=pmi2\nMpiDefault=none\n": "corral.conf:3: MpiDefault is already set on line 2",
	} {
		_, err := ParseFile(strings.NewReader(partitionLine+text), "corral.conf")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
