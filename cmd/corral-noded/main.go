// Command corral-noded is corral's node daemon (see package noded). It
// starts one corral-shim per job (cmd/corral-shim), which creates the
// job's container with corral-init as its PID 1.
//
// Build with cgo (libcontainer's nsenter is C): go build ./cmd/corral-noded.
// corral-shim (go build -tags seccomp ./cmd/corral-shim) and corral-init
// (CGO_ENABLED=0 go build ./cmd/corral-init) belong beside it.
package main

import (
	"context"
	"fmt"
	"github.com/corral-hpc/corral/jobspec"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded"
)

func main() {
	if err := app().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "corral-noded:", err)
		os.Exit(1)
	}
}

func app() *cli.App {
	return &cli.App{
		Name:      "corral-noded",
		Usage:     "run corral jobs on this host",
		UsageText: "corral-noded --ctld URL [options]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", DefaultText: "hostname", Usage: "node name"},
			&cli.StringFlag{Name: "ctld", Usage: "node-plane URL of corral-ctld, e.g. http://127.0.0.1:6817 (required)"},
			&cli.StringFlag{Name: "listen", Value: noded.DefaultListen, Usage: "address to serve the node plane on (127.0.0.1:0 picks a port)"},
			&cli.StringFlag{Name: "advertise", DefaultText: "from --listen", Usage: "host:port (or http://host:port) ctld reaches this node at"},
			&cli.StringFlag{Name: "key", Value: noded.DefaultKeyFile, Usage: "cluster key file (mode 0600)"},
			&cli.StringFlag{Name: "state", DefaultText: noded.DefaultStateDir + "/<name>", Usage: "state directory"},
			&cli.IntFlag{Name: "cpus", DefaultText: "CPUs in this process's affinity mask", Usage: "CPUs to offer; more than the host's cores oversubscribes them (logical CPU i runs on core i mod cores)"},
			&cli.StringFlag{Name: "mem", DefaultText: "physical memory minus 512M", Usage: "memory to offer, e.g. 64G (K/M/G/T suffixes; bare numbers are MiB)"},
			&cli.DurationFlag{Name: "kill-wait", Value: noded.DefaultKillWait, Usage: "grace between SIGTERM and SIGKILL when a job is cancelled or times out"},
			&cli.Int64Flag{Name: "max-pids", Value: noded.DefaultMaxPids, Usage: "process and thread limit per job"},
			&cli.StringFlag{Name: "init-path", DefaultText: "corral-init beside this executable", Usage: "corral-init binary (built with CGO_ENABLED=0)"},
			&cli.StringFlag{Name: "shim-path", DefaultText: "corral-shim beside this executable", Usage: "corral-shim binary, the per-job supervisor"},
			&cli.BoolFlag{Name: "no-spare-shim", Usage: "start each job's shim at its launch instead of keeping one started ahead"},
			imageStoreFlag(),
			imageRegistryFlag(),
			&cli.StringFlag{Name: "image-pull-max", Value: "32G", Usage: "largest image (unpacked) a job's --container-image may make this node pull"},
			&cli.StringSliceFlag{Name: "mount-root", Usage: "host directory under which users may --mount (checked as the user; repeatable)"},
			&cli.StringFlag{Name: "ca", DefaultText: "ca.pem beside --key", Usage: "cluster CA certificate (corral-ctld's <state>/ca.pem) pinned for an https --ctld"},
			&cli.StringFlag{Name: "cred-socket", DefaultText: "/run/corral/noded-<name>.sock", Usage: "Unix socket issuing remote-user credentials (docs/security.md); \"none\" offers none"},
		}, gpuFlags()...), // gpuflags.go
		Commands:        []*cli.Command{imageCommand()},
		HideHelpCommand: true,
		Action:          run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (all settings are flags; see --help)", c.Args().First())
	}
	cfg := noded.Config{
		Name: c.String("name"), CtldURL: c.String("ctld"), Listen: c.String("listen"),
		Advertise: c.String("advertise"), StateDir: c.String("state"), CPUs: c.Int("cpus"),
		KillWait: c.Duration("kill-wait"), MaxPids: c.Int64("max-pids"), InitPath: c.String("init-path"),
		SpareShim:  !c.Bool("no-spare-shim"),
		ImageStore: c.String("image-store"), MountRoots: c.StringSlice("mount-root"),
		ImageRegistries: c.StringSlice("image-registry"),
	}
	if p := c.String("shim-path"); p != "" {
		cfg.ShimCommand = []string{p}
	}
	if c.IsSet("cpus") && cfg.CPUs <= 0 {
		return fmt.Errorf("--cpus %d must be positive", cfg.CPUs)
	}
	if err := applyGPUFlags(c, &cfg); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		to   *int64
	}{{"mem", &cfg.MemBytes}, {"image-pull-max", &cfg.ImagePullMax}} {
		if err := positiveSize(c.String(f.name), f.name, f.to); err != nil {
			return err
		}
	}
	if cfg.CtldURL == "" {
		return fmt.Errorf("--ctld is required (the controller's node-plane URL, e.g. http://127.0.0.1:6817)")
	}
	key, err := api.LoadKey(c.String("key"))
	if err != nil {
		return fmt.Errorf("--key: %w", err)
	}
	cfg.Key = key
	cfg.CAFile = c.String("ca")
	if cfg.CAFile == "" {
		cfg.CAFile = filepath.Join(filepath.Dir(c.String("key")), api.CAFile)
	}
	switch cfg.CredSocket = c.String("cred-socket"); cfg.CredSocket {
	case "none":
		cfg.CredSocket = ""
	case "":
		name := cfg.Name
		if name == "" {
			name, _ = os.Hostname()
			name, _, _ = strings.Cut(name, ".")
		}
		cfg.CredSocket = fmt.Sprintf(api.CredentialSocketPattern, name)
	}
	if abs, err := filepath.Abs(c.String("key")); err == nil {
		cfg.Hide = append(cfg.Hide, abs) // root jobs could read it otherwise
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("must run as root: jobs run in containers under cgroups")
	}
	logger := log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)
	d, err := noded.New(cfg, logger)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return d.Run(ctx)
}

// positiveSize parses a size flag's value v (unset: to is left as it is).
func positiveSize(v, name string, to *int64) error {
	if v == "" {
		return nil
	}
	m, err := jobspec.ParseSize(v)
	if err != nil {
		return fmt.Errorf("--%s: %w", name, err)
	}
	if m <= 0 {
		return fmt.Errorf("--%s %s must be positive", name, v)
	}
	*to = m
	return nil
}
