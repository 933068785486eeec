package shim

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container"
)

// ctlBind makes the job's controller socket, which noded serves in
// <dir>/CtlDir, api.DefaultSocket in the container: the directory is
// bound, not the socket, so a socket noded makes anew after a restart is
// the one the job sees. It hides whatever the host has at /run/corral
// (ctld's own socket, noded's credential socket): inside a job this is
// the way to the controller.
func ctlBind(dir string, job *Job) ([]container.Bind, error) {
	if !job.CtlSocket {
		return nil, nil
	}
	src := filepath.Join(dir, CtlDir)
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("the job's controller socket directory %s is missing (%v)", src, err)
	}
	return []container.Bind{{Source: src, Dest: filepath.Dir(api.DefaultSocket), Checked: container.IDOf(&st)}}, nil
}

// ctlVars point the commands inside the job at its socket, whatever the
// submitter's environment said; ctlDropped are variables that would send
// them elsewhere ($CORRAL_CTLD: over TCP with a credential socket the
// job cannot see).
func ctlVars(job *Job) [][2]string {
	if !job.CtlSocket {
		return nil
	}
	return [][2]string{{api.SocketEnv, api.DefaultSocket}}
}

var ctlDropped = []string{api.CtldEnv, api.CredentialSocketEnv}

// withoutCtl is env less ctlDropped, for a job with a socket.
func withoutCtl(job *Job, env []string) []string {
	if !job.CtlSocket {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, d := range ctlDropped {
			drop = drop || k == d
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
