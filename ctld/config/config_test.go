package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

func mustParse(t *testing.T, text string) []api.Partition {
	t.Helper()
	parts, err := Parse(strings.NewReader(text), "corral.conf")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return parts
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []api.Partition
	}{
		{
			name: "spec example",
			text: "PartitionName=gpu Nodes=node[1-4],big01 Default=YES DefaultTime=1:00:00 MaxTime=7-00:00:00 DefMemPerCPU=2G\n",
			want: []api.Partition{{Name: "gpu", Nodes: []string{"node1", "node2", "node3", "node4", "big01"},
				Default: true, DefaultTime: 3600, MaxTime: 7 * 86400, DefaultMemPerCPU: 2 << 30}},
		},
		{
			name: "comments, blanks, ALL, first is default",
			text: "# cluster\n\n  PartitionName=batch Nodes=ALL   # everything\nPartitionName=debug Nodes=n1 MaxTime=30\n",
			want: []api.Partition{
				{Name: "batch", AllNodes: true, Default: true},
				{Name: "debug", Nodes: []string{"n1"}, MaxTime: 1800},
			},
		},
		{
			name: "explicit default not first, keys any case, bare MiB, UNLIMITED",
			text: "PartitionName=a Nodes=n[1-2] default=no maxtime=UNLIMITED\npartitionname=b nodes=all Default=yes DefMemPerCPU=512\n",
			want: []api.Partition{
				{Name: "a", Nodes: []string{"n1", "n2"}},
				{Name: "b", AllNodes: true, Default: true, DefaultMemPerCPU: 512 << 20},
			},
		},
		{
			name: "fGPU per GPU",
			text: "PartitionName=gpu Nodes=g[1-2] FGPUPerGPU=2\nPartitionName=five Nodes=ALL fgpuPerGPU=2.5\n",
			want: []api.Partition{
				{Name: "gpu", Nodes: []string{"g1", "g2"}, Default: true, FGPUPerGPUHundredths: 200},
				{Name: "five", AllNodes: true, FGPUPerGPUHundredths: 250},
			},
		},
		{
			name: "OverSubscribe",
			text: "PartitionName=a Nodes=ALL OverSubscribe=exclusive\nPartitionName=b Nodes=ALL OverSubscribe=YES\n" +
				"PartitionName=c Nodes=ALL OverSubscribe=YES:1\nPartitionName=d Nodes=ALL OverSubscribe=NO\n",
			want: []api.Partition{
				{Name: "a", AllNodes: true, Default: true, OverSubscribe: "EXCLUSIVE"},
				{Name: "b", AllNodes: true, OverSubscribe: "YES"},
				{Name: "c", AllNodes: true, OverSubscribe: "YES"},
				{Name: "d", AllNodes: true, OverSubscribe: "NO"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, wantErr string }{
		{"", "corral.conf: no partitions defined"},
		{"# only a comment\n", "no partitions defined"},
		{"PartitionName=a Nodes=ALL Colour=red\n", "corral.conf:1: unknown key Colour (valid: PartitionName, Nodes, Default, DefaultTime, MaxTime, DefMemPerCPU, FGPUPerGPU, OverSubscribe)"},
		{"PartitionName=a Nodes=ALL OverSubscribe=FORCE:4\n", "corral.conf:1: OverSubscribe: FORCE:4: corral never puts two jobs on one CPU; use NO, YES or EXCLUSIVE"},
		{"PartitionName=a Nodes=ALL OverSubscribe=YES:4\n", "OverSubscribe: YES:4: corral never puts two jobs on one CPU, so it takes no job count per CPU; write YES"},
		{"PartitionName=a Nodes=ALL OverSubscribe=EXCLUSIVE:2\n", "OverSubscribe: EXCLUSIVE takes no job count (got EXCLUSIVE:2)"},
		{"PartitionName=a Nodes=ALL OverSubscribe=maybe\n", "OverSubscribe: maybe: use NO, YES or EXCLUSIVE"},
		{"PartitionName=a Nodes=ALL FGPUPerGPU=0.5\n", `FGPUPerGPU: invalid fgpu_per_gpu "0.5": must be at least 1 fGPU per GPU`},
		{"PartitionName=a Nodes=ALL FGPUPerGPU=two\n", `FGPUPerGPU: invalid fgpu_per_gpu "two": not a number`},
		{"\n\nNodes=ALL PartitionName=a\n", "corral.conf:3: a line must start with PartitionName=, not Nodes"},
		{"PartitionName=a Nodes=ALL junk\n", `corral.conf:1: "junk" is not KEY=VALUE`},
		{"PartitionName=a Nodes=ALL Nodes=n1\n", "Nodes is given twice"},
		{"PartitionName= Nodes=ALL\n", "PartitionName has no value"},
		{"PartitionName=a\n", "partition a has no Nodes="},
		{"PartitionName=a Nodes=n[1-\n", "Nodes: host list"},
		{"PartitionName=a Nodes=ALL Default=maybe\n", "Default=maybe: use YES or NO"},
		{"PartitionName=a Nodes=ALL MaxTime=1:2:3:4\n", `MaxTime: invalid time limit "1:2:3:4"`},
		{"PartitionName=a Nodes=ALL DefaultTime=soon\n", `DefaultTime: invalid time limit "soon"`},
		{"PartitionName=a Nodes=ALL DefMemPerCPU=12Q\n", `DefMemPerCPU: invalid size "12Q"`},
		{"PartitionName=a Nodes=ALL DefMemPerCPU=0\n", "DefMemPerCPU must be more than 0"},
		{"PartitionName=a Nodes=ALL DefaultTime=2:00:00 MaxTime=1:00:00\n", "DefaultTime 02:00:00 is longer than MaxTime 01:00:00"},
		{"PartitionName=a Nodes=ALL\nPartitionName=a Nodes=ALL\n", "corral.conf:2: partition a is already defined on line 1"},
		{"PartitionName=a Nodes=ALL Default=YES\nPartitionName=b Nodes=ALL Default=YES\n", "corral.conf:2: partition b is marked Default=YES but line 1 already has the default"},
		{"PartitionName=x,y Nodes=ALL\n", `invalid partition name "x,y"`},
		{"PartitionName=DEFAULT Nodes=ALL\n", `invalid partition name "DEFAULT"`},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.text), "corral.conf")
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Parse(%q) error = %v, want one containing %q", tt.text, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error spans lines: %q", tt.text, err)
		}
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corral.conf")
	if err := os.WriteFile(path, []byte("PartitionName=p Nodes=ALL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parts, err := Load(path)
	if err != nil || len(parts) != 1 || parts[0].Name != "p" || !parts[0].Default {
		t.Fatalf("Load = %+v, %v", parts, err)
	}
	if _, err := Load(path + ".missing"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Load(missing) error = %v", err)
	}
	if d := Default(); len(d) != 1 || d[0].Name != "batch" || !d[0].AllNodes || !d[0].Default {
		t.Fatalf("Default() = %+v", d)
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"30", 30 * 60},
		{"0", 0},
		{"90", 90 * 60},
		{"5:30", 5*60 + 30},
		{"1:00:00", 3600},
		{"2:03:04", 2*3600 + 3*60 + 4},
		{"1-0", 86400},
		{"2-12", 2*86400 + 12*3600},
		{"1-2:30", 86400 + 2*3600 + 30*60},
		{"7-00:00:00", 7 * 86400},
		{"1-1:1:1", 86400 + 3600 + 61},
		{"UNLIMITED", 0},
		{"infinite", 0},
		{" 10 ", 600},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "x", "1:2:3:4", "-5", "1-", "1-2-3", "1:", ":1", "1.5", "1-2:3:4:5", "99999999999999999999"} {
		if _, err := ParseTime(bad); err == nil || !strings.Contains(err.Error(), "invalid time") {
			t.Errorf("ParseTime(%q) error = %v", bad, err)
		}
	}
}

func TestFormatTime(t *testing.T) {
	tests := map[int64]string{0: "UNLIMITED", 59: "00:00:59", 3600: "01:00:00", 7 * 86400: "7-00:00:00", 86400 + 61: "1-00:01:01"}
	for in, want := range tests {
		if got := FormatTime(in); got != want {
			t.Errorf("FormatTime(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"512", 512 << 20},
		{"2G", 2 << 30},
		{"2g", 2 << 30},
		{"2GB", 2 << 30},
		{"2GiB", 2 << 30},
		{"100K", 100 << 10},
		{"1T", 1 << 40},
		{"300M", 300 << 20},
		{"1.5G", 3 << 29},

		{"0", 0},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "G", "12Q", "-1G", "1e3", "abc", "1iB", "0x10", "1,5G", "99999999999T", "4096B"} {
		if _, err := ParseSize(bad); err == nil || !strings.Contains(err.Error(), "invalid size") {
			t.Errorf("ParseSize(%q) error = %v", bad, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := map[int64]string{512: "512B", 2 << 10: "2K", 512 << 20: "512M", 3 << 29: "1.5G", 2 << 40: "2T"}
	for in, want := range tests {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}
