//go:build !slurmonly

package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// maxSocketPath is the longest path a Unix socket address can hold.
const maxSocketPath = 107

// stopGrace is how long a daemon may take to exit after SIGTERM.
const stopGrace = 10 * time.Second

func devCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "dev",
		Usage: "run a single-host cluster in the foreground (corral-ctld plus corral-noded)",
		UsageText: "corral dev [--state DIR] [--socket PATH] [--cpus N] [--mem SIZE] [--nodes K]\n" +
			"   [--gpu-mock dgxa100|dgxh100 [--gpu-mock-count N] [--gpu-mock-mig LIST]] [--fgpu-per-gpu X]\n" +
			"   Stop it with Ctrl-C (SIGINT) or SIGTERM.",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "state", Usage: "state and log directory (default: a new temporary directory)", TakesFile: true},
			socketFlag(),
			&ucli.IntFlag{Name: "cpus", Usage: "CPUs per node (default: what noded detects)"},
			&ucli.StringFlag{Name: "mem", Usage: "memory per node, e.g. 4G (default: what noded detects)"},
			&ucli.IntFlag{Name: "nodes", Value: 1, Usage: "number of node daemons (named dev1, dev2, ...)"},
			&ucli.StringFlag{Name: "config", Usage: "partition config file for corral-ctld", TakesFile: true},
			&ucli.StringFlag{Name: "web", Usage: "serve the dashboard on this `ADDR` (sign in with corral dashboard)"},
			&ucli.StringFlag{Name: "ctld-bin", Usage: "corral-ctld binary (default: next to corral, else on PATH)", TakesFile: true},
			&ucli.StringFlag{Name: "noded-bin", Usage: "corral-noded binary (default: next to corral, else on PATH)", TakesFile: true},
			&ucli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "how long to wait for the cluster to come up"},
		}, devGPUFlags()...), // devgpu.go
		Action: dev,
	}
}

// devCluster is the plan for one `corral dev` run.
type devCluster struct {
	state, socket, key, logs string
	ctldBin, nodedBin        string
	config                   string
	web                      string // the dashboard's address, "" for none
	cpus                     int
	mem                      string
	nodes                    []string // node names
	timeout                  time.Duration
	gpuArgs                  []string    // GPU flags for every noded (devgpu.go)
	cgroups                  *devCgroups // the daemons' cgroups on a cgroup v2 host; nil elsewhere
}

func dev(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	d, err := planDev(c)
	if err != nil {
		return err
	}
	// Signals end the cluster, at any point; children are in their own
	// process group so a terminal's Ctrl-C reaches only us and we stop
	// them in order.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if d.cgroups, err = newDevCgroups(cgroup2Root); err != nil {
		return err
	}
	defer func() {
		if err := d.cgroups.remove(); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "corral dev: %v\n", err)
		}
	}()
	var kids []*child
	defer func() { stopAll(kids) }()

	ctld, err := d.startCtld()
	if err != nil {
		return err
	}
	kids = append(kids, ctld)
	url, err := d.waitForAddr(ctx, ctld)
	if err != nil {
		return err
	}
	for _, name := range d.nodes {
		n, err := d.startNoded(name, url)
		if err != nil {
			return err
		}
		kids = append(kids, n)
	}
	if err := d.waitReady(ctx, kids); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "corral dev: state in %s, logs in %s; stop with Ctrl-C\n", d.state, d.logs)
	fmt.Fprintf(out(c), "corral dev cluster ready: socket %s\nexport %s=%s\n", d.socket, api.SocketEnv, shellQuote(d.socket))
	if d.web != "" {
		fmt.Fprintf(out(c), "dashboard on %s: sign in with corral dashboard\n", d.web)
	}

	if err := waitAny(ctx, kids); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "corral dev: stopping\n")
	return nil // the deferred stopAll stops every child
}

// planDev checks the options and prepares the state directory.
func planDev(c *ucli.Context) (*devCluster, error) {
	d := &devCluster{cpus: c.Int("cpus"), mem: c.String("mem"), config: c.String("config"), web: c.String("web"),
		timeout: c.Duration("timeout")}
	k := c.Int("nodes")
	switch {
	case k < 1:
		return nil, usageErrorf("--nodes must be at least 1 (got %d)", k)
	case c.IsSet("cpus") && d.cpus < 1:
		return nil, usageErrorf("--cpus must be at least 1 (got %d)", d.cpus)
	case d.timeout <= 0:
		return nil, usageErrorf("--timeout must be positive (got %s)", d.timeout)
	}
	if d.mem != "" {
		if _, err := jobspec.ParseSize(d.mem); err != nil {
			return nil, usageErrorf("invalid --mem %q: use a number with an optional K, M, G or T suffix", d.mem)
		}
	}
	var err error
	if d.gpuArgs, err = devGPUArgs(c); err != nil {
		return nil, err
	}
	for i := 1; i <= k; i++ {
		d.nodes = append(d.nodes, "dev"+strconv.Itoa(i))
	}
	if d.ctldBin, err = findBinary(c.String("ctld-bin"), "corral-ctld", "ctld-bin"); err != nil {
		return nil, err
	}
	if d.nodedBin, err = findBinary(c.String("noded-bin"), "corral-noded", "noded-bin"); err != nil {
		return nil, err
	}

	// Check everything that can be checked before creating anything, so a
	// refused start leaves nothing behind.
	madeTemp := false
	if d.state = c.String("state"); d.state == "" {
		if d.state, err = os.MkdirTemp("", "corral-dev-"); err != nil {
			return nil, fmt.Errorf("cannot create a state directory: %v", err)
		}
		madeTemp = true
	}
	if err := d.placeSocket(c); err != nil {
		if madeTemp {
			os.Remove(d.state)
		}
		return nil, err
	}
	if err := os.MkdirAll(d.state, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create state directory: %v", err)
	}
	d.logs = filepath.Join(d.state, "logs")
	if err := os.MkdirAll(d.logs, 0o755); err != nil {
		return nil, err
	}
	// One key for both daemons, made before either starts so that noded
	// never races ctld for it.
	d.key = filepath.Join(d.state, "cluster.key")
	if _, err := api.LoadOrCreateKey(d.key); err != nil {
		return nil, fmt.Errorf("cluster key: %v", err)
	}
	return d, nil
}

// placeSocket decides where the user socket goes and checks that it can
// be used.
func (d *devCluster) placeSocket(c *ucli.Context) error {
	var err error
	if d.state, err = filepath.Abs(d.state); err != nil {
		return err
	}
	// Only an explicit --socket: a $CORRAL_SOCKET left over from another
	// cluster must not be taken over.
	if d.socket = explicitSocket(c); d.socket == "" {
		d.socket = filepath.Join(d.state, "ctld.sock")
	}
	if d.socket, err = filepath.Abs(d.socket); err != nil {
		return err
	}
	if len(d.socket) > maxSocketPath {
		return usageErrorf("socket path %s is too long for a Unix socket (%d bytes, at most %d): use a shorter --state or --socket",
			d.socket, len(d.socket), maxSocketPath)
	}
	if answers(c.Context, d.socket) {
		return fmt.Errorf("a controller already answers at %s: stop it or give another --socket", d.socket)
	}
	return nil
}

func (d *devCluster) ctldState() string { return filepath.Join(d.state, "ctld") }

func (d *devCluster) startCtld() (*child, error) {
	addr := filepath.Join(d.ctldState(), "ctld.addr")
	if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err // a stale address would send nodes to a dead port
	}
	args := []string{"--state", d.ctldState(), "--socket", d.socket, "--listen", "127.0.0.1:0", "--key", d.key}
	if d.config != "" {
		args = append(args, "--config", d.config)
	}
	if d.web != "" {
		args = append(args, "--web", d.web)
	}
	return startChild("corral-ctld", d.ctldBin, args, filepath.Join(d.logs, "ctld.log"), nil)
}

func (d *devCluster) startNoded(name, ctldURL string) (*child, error) {
	args := []string{"--name", name, "--ctld", ctldURL, "--listen", "127.0.0.1:0", "--key", d.key,
		"--state", filepath.Join(d.state, "noded", name), "--kill-wait", "2s",
		// TLS pinned to the CA ctld created; remote-user credentials on a
		// socket of the dev cluster's own (docs/security.md).
		"--ca", filepath.Join(d.ctldState(), api.CAFile), "--cred-socket", filepath.Join(d.state, "noded-"+name+".sock")}
	if d.cpus > 0 {
		args = append(args, "--cpus", strconv.Itoa(d.cpus))
	}
	if d.mem != "" {
		args = append(args, "--mem", d.mem)
	}
	args = append(args, d.nodeGPUArgs(name)...) // devgpu.go
	cg, err := d.cgroups.forNode(name)
	if err != nil {
		return nil, err
	}
	if cg != nil {
		defer cg.Close() // the child is in it once started
	}
	return startChild("corral-noded "+name, d.nodedBin, args, filepath.Join(d.logs, name+".log"), cg)
}

// waitForAddr waits for ctld to write its node-plane URL.
func (d *devCluster) waitForAddr(ctx context.Context, ctld *child) (string, error) {
	path := filepath.Join(d.ctldState(), "ctld.addr")
	var url string
	err := d.poll(ctx, []*child{ctld}, func() (bool, string) {
		data, err := os.ReadFile(path)
		url = strings.TrimSpace(string(data))
		if err != nil || !strings.HasPrefix(url, "http") {
			return false, "corral-ctld has not written " + path
		}
		return true, ""
	})
	return url, err
}

// waitReady waits until the socket answers and every node is registered
// and up.
func (d *devCluster) waitReady(ctx context.Context, kids []*child) error {
	cl := api.NewClient(d.socket)
	return d.poll(ctx, kids, func() (bool, string) {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := cl.Do(rctx, http.MethodGet, "/v1/ping", nil, nil); err != nil {
			return false, "the controller does not answer: " + err.Error()
		}
		nodes, err := cl.Nodes(rctx)
		if err != nil {
			return false, "cannot list nodes: " + err.Error()
		}
		up := map[string]bool{}
		for _, n := range nodes {
			up[n.Name] = n.State != api.NodeDown
		}
		for _, name := range d.nodes {
			if !up[name] {
				return false, "node " + name + " has not registered"
			}
		}
		return true, ""
	})
}

// poll calls check until it succeeds, a child exits, a signal arrives or
// the timeout passes.
func (d *devCluster) poll(ctx context.Context, kids []*child, check func() (bool, string)) error {
	deadline := time.Now().Add(d.timeout)
	for {
		ok, why := check()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster did not come up within %s: %s (logs in %s)", d.timeout, why, d.logs)
		}
		for _, k := range kids {
			if k.exited() {
				return k.unexpectedExit()
			}
		}
		select {
		case <-ctx.Done():
			return exitStatus(0) // interrupted while starting: stop quietly
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitAny returns nil when ctx ends and an error when a child exits first.
func waitAny(ctx context.Context, kids []*child) error {
	exited := make(chan *child, len(kids))
	for _, k := range kids {
		go func(k *child) {
			select {
			case <-k.done:
				exited <- k
			case <-ctx.Done():
			}
		}(k)
	}
	select {
	case <-ctx.Done():
		return nil
	case k := <-exited:
		return k.unexpectedExit()
	}
}

// shellQuote quotes s for a POSIX shell when it needs quoting, so the
// export line can be pasted or eval'd as is.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:@%,", c)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// answers reports whether something serves the user API at socket.
func answers(ctx context.Context, socket string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return api.NewClient(socket).Do(ctx, http.MethodGet, "/v1/ping", nil, nil) == nil
}

// findBinary resolves a sibling daemon: the flag, else next to this
// executable, else $PATH.
func findBinary(flag, name, flagName string) (string, error) {
	if flag != "" {
		p, err := exec.LookPath(flag)
		if err != nil {
			return "", usageErrorf("--%s %s: not an executable file", flagName, flag)
		}
		return filepath.Abs(p)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	return "", fmt.Errorf("cannot find %s next to this corral or on PATH: build it (make) or give --%s", name, flagName)
}
