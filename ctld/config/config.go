package config

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/gpu"
	"github.com/corral-hpc/corral/hostlist"
)

// DefaultPath is where corral-ctld looks for its configuration file.
const DefaultPath = "/etc/corral/corral.conf"

// DefaultPartitionName names the partition used when there is no file.
const DefaultPartitionName = "batch"

// keys lists the keys a partition line may have, in the order documented.
var keys = []string{"PartitionName", "Nodes", "Default", "DefaultTime", "MaxTime", "DefMemPerCPU", "FGPUPerGPU", "OverSubscribe"}

// Default is the configuration without a file: one default partition
// "batch" holding every node.
func Default() []api.Partition {
	return []api.Partition{{Name: DefaultPartitionName, AllNodes: true, Default: true}}
}

// Load reads the file at path and returns its partitions (LoadFile
// returns everything the file says).
func Load(path string) ([]api.Partition, error) {
	f, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return f.Partitions, nil
}

// Parse reads the file from r and returns its partitions; source names r
// in errors. Exactly one partition is the default: the one marked
// Default=YES, else the first. See ParseFile for the other lines.
func Parse(r io.Reader, source string) ([]api.Partition, error) {
	f, err := ParseFile(r, source)
	if err != nil {
		return nil, err
	}
	return f.Partitions, nil
}

func parseLine(fields []string) (api.Partition, error) {
	var p api.Partition
	given := make(map[string]bool)
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return p, fmt.Errorf("%q is not KEY=VALUE", f)
		}
		key := canonicalKey(k)
		if key == "" {
			return p, fmt.Errorf("unknown key %s (valid: %s)", k, strings.Join(keys, ", "))
		}
		if i == 0 && key != "PartitionName" {
			return p, fmt.Errorf("a line must start with PartitionName=, not %s", k)
		}
		if given[key] {
			return p, fmt.Errorf("%s is given twice", key)
		}
		given[key] = true
		if v == "" {
			return p, fmt.Errorf("%s has no value", key)
		}
		if err := setKey(&p, key, v); err != nil {
			return p, err
		}
	}
	if !given["Nodes"] {
		return p, fmt.Errorf("partition %s has no Nodes= (a host list such as node[1-4] or ALL)", p.Name)
	}
	if p.MaxTime > 0 && p.DefaultTime > p.MaxTime {
		return p, fmt.Errorf("partition %s: DefaultTime %s is longer than MaxTime %s", p.Name, FormatTime(p.DefaultTime), FormatTime(p.MaxTime))
	}
	return p, nil
}

func canonicalKey(k string) string {
	for _, key := range keys {
		if strings.EqualFold(k, key) {
			return key
		}
	}
	return ""
}

func setKey(p *api.Partition, key, v string) error {
	var err error
	switch key {
	case "PartitionName":
		if strings.ContainsAny(v, ",[]") || strings.EqualFold(v, "DEFAULT") {
			return fmt.Errorf("invalid partition name %q", v)
		}
		p.Name = v
	case "Nodes":
		if strings.EqualFold(v, "ALL") {
			p.AllNodes = true
			return nil
		}
		p.Nodes, err = hostlist.Expand(v)
	case "Default":
		switch strings.ToUpper(v) {
		case "YES":
			p.Default = true
		case "NO":
		default:
			//lint:ignore ST1005 the line starts with the key, spelled as in corral.conf
			return fmt.Errorf("Default=%s: use YES or NO", v)
		}
	case "DefaultTime":
		p.DefaultTime, err = ParseTime(v)
	case "MaxTime":
		p.MaxTime, err = ParseTime(v)
	case "DefMemPerCPU":
		p.DefaultMemPerCPU, err = ParseSize(v)
		if err == nil && p.DefaultMemPerCPU == 0 {
			err = errors.New("DefMemPerCPU must be more than 0")
		}
	case "FGPUPerGPU":
		var h gpu.Hundredths
		h, err = gpu.ParsePerGPU(v)
		p.FGPUPerGPUHundredths = int(h)
	case "OverSubscribe":
		p.OverSubscribe, err = parseOverSubscribe(v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// Contains reports whether partition p includes the node called name.
func Contains(p api.Partition, name string) bool {
	if p.AllNodes {
		return true
	}
	for _, n := range p.Nodes {
		if n == name {
			return true
		}
	}
	return false
}
