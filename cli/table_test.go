package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTable: corral's tables, as tablewriter printed them before
// corral laid them out itself (these outputs are tablewriter's, kept).
func TestWriteTable(t *testing.T) {
	header := []string{"JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"}
	tests := []struct {
		name string
		rows [][]string
		want string
	}{
		{"none", nil, "JOBID  PARTITION  NAME  USER  ST  TIME  NODES  NODELIST(REASON)\n"},
		{"plain", [][]string{{"1", "batch", "train", "alice", "R", "1:02", "1", "n1"}, {"22", "gpu", "x", "bob", "PD", "0:00", "2", "(Priority)"}},
			"JOBID  PARTITION  NAME   USER   ST  TIME  NODES  NODELIST(REASON)\n" +
				"1      batch      train  alice  R   1:02  1      n1\n" +
				"22     gpu        x      bob    PD  0:00  2      (Priority)\n"},
		{"empty cells", [][]string{{"3", "", "a", "", "PD", "", "1", ""}},
			"JOBID  PARTITION  NAME  USER  ST  TIME  NODES  NODELIST(REASON)\n" +
				"3                 a           PD        1\n"},
		{"wide and accented", [][]string{{"4", "batch", "学习-日本語", "zoë", "R", "0:01", "1", "n2"}, {"5", "batch", "café", "émile", "PD", "0:00", "1", "(Resources)"}},
			"JOBID  PARTITION  NAME         USER   ST  TIME  NODES  NODELIST(REASON)\n" +
				"4      batch      学习-日本語  zoë    R   0:01  1      n2\n" +
				"5      batch      café         émile  PD  0:00  1      (Resources)\n"},
		{"long last column", [][]string{{"6", "b", "n", "u", "R", "1:00:00", "16", "node[001-016]," + strings.Repeat("x", 40)}},
			"JOBID  PARTITION  NAME  USER  ST  TIME     NODES  NODELIST(REASON)\n" +
				"6      b          n     u     R   1:00:00  16     node[001-016]," + strings.Repeat("x", 40) + "\n"},
		{"control characters", [][]string{{"7", "batch", "job\x1b[31m\nx", "alice", "PD", "0:00", "1", "(Priority)"}},
			"JOBID  PARTITION  NAME        USER   ST  TIME  NODES  NODELIST(REASON)\n" +
				"7      batch      job?[31m?x  alice  PD  0:00  1      (Priority)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := writeTable(&got, header, tt.rows); err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Fatalf("table:\n%s\nwant:\n%s", got.String(), tt.want)
			}
		})
	}
}
