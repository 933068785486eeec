package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// tablewriterOutput is writeTable below the fast path's threshold.
func tablewriterOutput(t *testing.T, header []string, rows [][]string) string {
	t.Helper()
	if len(rows) >= bigTable {
		t.Fatalf("%d rows would take the fast path", len(rows))
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, header, rows); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestFastTableMatchesTablewriter(t *testing.T) {
	header := []string{"JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"}
	tests := []struct {
		name string
		rows [][]string
	}{
		{"none", nil},
		{"plain", [][]string{{"1", "batch", "train", "alice", "R", "1:02", "1", "n1"}, {"22", "gpu", "x", "bob", "PD", "0:00", "2", "(Priority)"}}},
		{"empty cells", [][]string{{"3", "", "a", "", "PD", "", "1", ""}}},
		{"wide and accented", [][]string{{"4", "batch", "学习-日本語", "zoë", "R", "0:01", "1", "n2"}, {"5", "batch", "café", "émile", "PD", "0:00", "1", "(Resources)"}}},
		{"long last column", [][]string{{"6", "b", "n", "u", "R", "1:00:00", "16", "node[001-016]," + strings.Repeat("x", 40)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tablewriterOutput(t, header, tt.rows)
			var got bytes.Buffer
			if err := writeTableFast(&got, header, tt.rows); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Fatalf("fast table differs:\n got:\n%s\nwant:\n%s", got.String(), want)
			}
		})
	}
	// And through writeTable itself, above the threshold.
	var rows [][]string
	for i := range bigTable {
		rows = append(rows, []string{fmt.Sprint(i), "batch", "job\x1b[31m", "alice", "PD", "0:00", "1", "(Priority)"})
	}
	var big bytes.Buffer
	if err := writeTable(&big, header, rows); err != nil {
		t.Fatal(err)
	}
	small := tablewriterOutput(t, header, rows[bigTable-3:])
	lines := strings.Split(big.String(), "\n")
	if !strings.Contains(lines[1], "job?[31m") {
		t.Fatalf("control characters not made printable: %q", lines[1])
	}
	if got := lines[0] + "\n" + strings.Join(lines[bigTable-2:], "\n"); got != small {
		t.Fatalf("big table's last rows differ from tablewriter's:\n%s\nwant\n%s", got, small)
	}
}
