package noded

import (
	"sort"
	"strconv"
	"strings"
)

// cpuSlots allocates noded's logical CPUs. Logical CPU i runs on host core
// cores[i mod len(cores)]: with more logical CPUs than cores the node is
// oversubscribed and jobs share cores (their CFS quotas still count their
// own CPUs). Allocation takes the lowest free slots, which spreads a job
// over distinct cores before doubling up.
type cpuSlots struct {
	cores []int
	used  []bool
}

func newCPUSlots(n int, cores []int) *cpuSlots {
	return &cpuSlots{cores: cores, used: make([]bool, n)}
}

func (c *cpuSlots) free() int {
	n := 0
	for _, u := range c.used {
		if !u {
			n++
		}
	}
	return n
}

// alloc takes n slots; ok is false (and nothing taken) when too few are free.
func (c *cpuSlots) alloc(n int) (slots []int, ok bool) {
	for i, u := range c.used {
		if len(slots) == n {
			break
		}
		if !u {
			slots = append(slots, i)
		}
	}
	if len(slots) < n {
		return nil, false
	}
	for _, s := range slots {
		c.used[s] = true
	}
	return slots, true
}

// take marks slots used (jobs found at start); out-of-range ones are ignored.
func (c *cpuSlots) take(slots []int) {
	for _, s := range slots {
		if s >= 0 && s < len(c.used) {
			c.used[s] = true
		}
	}
}

func (c *cpuSlots) release(slots []int) {
	for _, s := range slots {
		if s >= 0 && s < len(c.used) {
			c.used[s] = false
		}
	}
}

// cpuset is the cpuset string of the cores behind slots, e.g. "0-2,5".
func (c *cpuSlots) cpuset(slots []int) string {
	seen := map[int]bool{}
	var cores []int
	for _, s := range slots {
		core := c.cores[s%len(c.cores)]
		if !seen[core] {
			seen[core] = true
			cores = append(cores, core)
		}
	}
	sort.Ints(cores)
	var parts []string
	for i := 0; i < len(cores); {
		j := i
		for j+1 < len(cores) && cores[j+1] == cores[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cores[i]))
		} else {
			parts = append(parts, strconv.Itoa(cores[i])+"-"+strconv.Itoa(cores[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
