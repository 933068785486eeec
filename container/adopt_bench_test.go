package container_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-hpc/corral/container"
	"github.com/corral-hpc/corral/container/containertest"
)

// benchBinds are an extern job's binds: its work directory and home
// (writable), and a read-only one standing in for the controller
// socket's directory.
func benchBinds(b *testing.B) []container.Bind {
	base := varTmpDir(b)
	var binds []container.Bind
	for _, name := range []string{"work", "home", "ctl"} {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
		binds = append(binds, container.Bind{Source: d, Dest: d, Writable: name != "ctl", Checked: fileID(b, d)})
	}
	return binds
}

// BenchmarkStartExtern is an extern job's container started by runc
// (Start), with the job's binds and limits: what BenchmarkAdopt replaces.
func BenchmarkStartExtern(b *testing.B) {
	h := adoptHost(b)
	binds := benchBinds(b)
	stateRoot := filepath.Join(containertest.MustStateDir(b), "runc")
	res := h.Resources(jobLimits)
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		p := adoptPlace(b, h, uint64(100+i))
		b.StartTimer()
		c := startHeld(b, stateRoot, fmt.Sprintf("start%d", i), p, res, binds, jobShm)
		b.StopTimer()
		endHeld(b, c, p, nil)
	}
}

// BenchmarkAdopt is the same job's container made by adopting a prepared
// one (prepared off the timer, as the spare shim does before the job).
func BenchmarkAdopt(b *testing.B) {
	h := adoptHost(b)
	binds := benchBinds(b)
	stateRoot := filepath.Join(containertest.MustStateDir(b), "runc")
	res := h.Resources(jobLimits)
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		p := adoptPlace(b, h, uint64(100+i))
		c := startHeld(b, stateRoot, fmt.Sprintf("spare%d", i), p, nil, nil, 0)
		b.StartTimer()
		err := c.Adopt(&container.Adoption{ID: fmt.Sprintf("job%d", i), Resources: res, Binds: binds, ShmBytes: jobShm})
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		endHeld(b, c, p, nil)
	}
}
