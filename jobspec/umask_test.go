package jobspec

import (
	"strings"
	"testing"
)

func TestSubmitUmask(t *testing.T) {
	env := func(vars map[string]string) LookupFunc {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	tests := []struct {
		vars    map[string]string
		current uint32
		want    string
		wantErr bool
	}{
		{nil, 0o077, "0077", false},
		{nil, 0o022, "0022", false},
		{nil, 0, "0000", false},
		{map[string]string{"SLURM_UMASK": "0027"}, 0o077, "0027", false}, // sbatch: the variable wins
		{map[string]string{"SLURM_UMASK": "2"}, 0o077, "0002", false},
		{map[string]string{"SLURM_UMASK": "0778"}, 0o022, "", true},
		{map[string]string{"SLURM_UMASK": "1777"}, 0o022, "", true},
		{map[string]string{"SLURM_UMASK": ""}, 0o022, "", true},
		{map[string]string{"SLURM_UMASK": "u=rwx"}, 0o022, "", true},
	}
	for _, tc := range tests {
		got, err := SubmitUmask(env(tc.vars), tc.current)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("SubmitUmask(%v, %04o) = %q, %v; want %q (error %v)", tc.vars, tc.current, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestProcessUmask(t *testing.T) {
	status := "Name:\tcorral\nUmask:\t0027\nState:\tR (running)\n"
	if m, err := ProcessUmask(strings.NewReader(status)); err != nil || m != 0o027 {
		t.Errorf("got %04o, %v; want 0027", m, err)
	}
	for _, bad := range []string{"Name:\tx\n", "Umask:\t9\n", "Umask:\t01777\n"} {
		if _, err := ProcessUmask(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
