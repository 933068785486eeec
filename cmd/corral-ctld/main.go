// Command corral-ctld is corral's controller daemon: a thin shell over
// package ctld that turns flags into a ctld.Config and runs it until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld"
	"github.com/corral-hpc/corral/ctld/config"
	"github.com/urfave/cli/v2"
)

func main() {
	if err := newApp(os.Stderr).Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "corral-ctld: "+err.Error())
		os.Exit(1)
	}
}

func newApp(logTo io.Writer) *cli.App {
	return &cli.App{
		Name:            "corral-ctld",
		Usage:           "the corral controller: job queue, scheduling, node tracking",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Value: ctld.DefaultStateDir, Usage: "state `DIR` (ctld.db, cluster.key, ctld.addr)"},
			&cli.StringFlag{Name: "socket", Value: api.DefaultSocket, Usage: "user plane Unix socket `PATH`"},
			&cli.StringFlag{Name: "listen", Value: ctld.DefaultListen, Usage: "node plane TCP `ADDR` (127.0.0.1:0 picks a port, see <state>/ctld.addr)"},
			&cli.StringFlag{Name: "key", Usage: "cluster key `FILE` (default <state>/cluster.key, created if missing)"},
			&cli.StringFlag{Name: "config", Value: config.DefaultPath, Usage: "partitions config `FILE` (optional unless given)"},
			&cli.DurationFlag{Name: "node-timeout", Value: ctld.DefaultNodeTimeout, Usage: "a node silent this long is DOWN"},
			&cli.DurationFlag{Name: "heartbeat", Value: ctld.DefaultHeartbeat, Usage: "heartbeat interval told to nodes"},
			&cli.BoolFlag{Name: "check", Usage: "verify the state file (<state>/ctld.db) and exit: 0 sound, 1 damaged or unreadable; runs nothing"},
			&cli.StringFlag{Name: "web", Usage: "serve the dashboard on this TCP `ADDR` (default: none; see docs/web.md)"},
			&cli.StringFlag{Name: "web-url", Usage: "the `URL` browsers reach the dashboard at, for login links (default: http:// and the --web address)"},
			&cli.DurationFlag{Name: "web-link-ttl", Value: time.Minute, Usage: "how long a login link from corral dashboard stays valid"},
			&cli.StringFlag{Name: "web-trusted-header", Usage: "a request `HEADER` naming the user, set by a sign-on proxy in front of the dashboard (default: off; see docs/web.md)"},
			&cli.StringFlag{Name: "metrics-listen", Usage: "serve Prometheus metrics on this TCP `ADDR` (/metrics; default: none; see docs/metrics.md)"},
			&cli.StringSliceFlag{Name: "tls-san", Usage: "another host `NAME` or address for the controller's TLS certificate (repeatable; see docs/security.md)"},
			&cli.BoolFlag{Name: "insecure-plaintext", Usage: "serve the TCP port as plain HTTP instead of TLS (tests only: nothing between hosts is encrypted)"},
			&cli.Float64Flag{Name: "rate-limit", Value: ctld.DefaultRateLimit, Usage: "user-plane requests per second per uid before 429 \"slow down\" (admins exempt; negative: no limit)"},
			&cli.IntFlag{Name: "rate-burst", Value: ctld.DefaultRateBurst, Usage: "user-plane requests a uid may send at once"},
			&cli.IntFlag{Name: "max-conns-per-user", Value: ctld.DefaultMaxConnsPerUser, Usage: "open connections per uid, local and remote, before 429 (root and admins exempt; negative: unbounded)"},
			&cli.IntFlag{Name: "max-conns-per-host", Value: ctld.DefaultMaxConnsPerHost, Usage: "TCP connections per address before its first request identifies it (negative: unbounded)"},
			&cli.IntFlag{Name: "max-conns", Usage: "connections of all users together, root, admins and nodes aside (default: the descriptor limit less 1024, at most 8192)"},
			&cli.DurationFlag{Name: "read-timeout", Value: ctld.DefaultReadTimeout, Usage: "time a request, header and body, may take to arrive"},
			&cli.DurationFlag{Name: "idle-timeout", Value: ctld.DefaultIdleTimeout, Usage: "an idle keep-alive connection is closed after this"},
		},
		// One line per error, no usage dump.
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return err },
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return fmt.Errorf("unexpected argument %q (corral-ctld takes only flags)", c.Args().First())
			}
			if c.Bool("check") {
				return checkState(c.App.Writer, c.String("state"))
			}
			cfg, err := configFromFlags(c)
			if err != nil {
				return err
			}
			cfg.Logger = log.New(logTo, "", log.LstdFlags|log.Lmicroseconds)
			raiseFileLimit(cfg.Logger)
			srv, err := ctld.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return srv.Run(ctx)
		},
	}
}

func configFromFlags(c *cli.Context) (ctld.Config, error) {
	cfg := ctld.Config{
		StateDir:    c.String("state"),
		Socket:      c.String("socket"),
		Listen:      c.String("listen"),
		KeyFile:     c.String("key"),
		ConfigFile:  c.String("config"),
		NodeTimeout: c.Duration("node-timeout"),
		Heartbeat:   c.Duration("heartbeat"),
	}
	cfg.MetricsListen = c.String("metrics-listen")
	cfg.WebListen, cfg.WebURL, cfg.WebTrustedHeader = c.String("web"), c.String("web-url"), c.String("web-trusted-header")
	if cfg.WebLinkTTL = c.Duration("web-link-ttl"); cfg.WebLinkTTL <= 0 || cfg.WebLinkTTL > time.Hour {
		return cfg, errors.New("--web-link-ttl must be more than 0 and at most 1h")
	}
	cfg.TLSSANs, cfg.InsecurePlaintext = c.StringSlice("tls-san"), c.Bool("insecure-plaintext")
	cfg.RateLimit, cfg.RateBurst = c.Float64("rate-limit"), c.Int("rate-burst")
	if cfg.RateLimit == 0 || cfg.RateBurst <= 0 {
		return cfg, errors.New("--rate-limit must not be 0 (negative turns it off) and --rate-burst must be positive")
	}
	cfg.MaxConnsPerUser, cfg.MaxConnsPerHost, cfg.MaxConns = c.Int("max-conns-per-user"), c.Int("max-conns-per-host"), c.Int("max-conns")
	cfg.ReadTimeout, cfg.IdleTimeout = c.Duration("read-timeout"), c.Duration("idle-timeout")
	if cfg.MaxConnsPerUser == 0 || cfg.MaxConnsPerHost == 0 || cfg.MaxConns < 0 {
		return cfg, errors.New("--max-conns-per-user and --max-conns-per-host must not be 0 (negative: unbounded), and --max-conns must not be negative")
	}
	if cfg.ReadTimeout <= 0 || cfg.IdleTimeout <= 0 {
		return cfg, errors.New("--read-timeout and --idle-timeout must be positive durations")
	}
	if cfg.NodeTimeout <= 0 || cfg.Heartbeat <= 0 {
		return cfg, errors.New("--node-timeout and --heartbeat must be positive durations")
	}
	if cfg.Heartbeat >= cfg.NodeTimeout {
		return cfg, fmt.Errorf("--heartbeat %s must be shorter than --node-timeout %s", cfg.Heartbeat, cfg.NodeTimeout)
	}
	if !c.IsSet("config") {
		// The default file is optional: without it there is one
		// partition, "batch", of every node.
		if _, err := os.Stat(cfg.ConfigFile); errors.Is(err, os.ErrNotExist) {
			cfg.ConfigFile = ""
		}
	}
	return cfg, nil
}

// raiseFileLimit lifts the soft descriptor limit to the hard one: every
// connection is a descriptor, and the connection bounds (the automatic
// --max-conns) are computed from this limit. The Go runtime does the same
// since 1.19; doing it here states it. Only a failure is logged: a start
// that fails (a damaged state file) must print one line, its reason.
func raiseFileLimit(logger *log.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		logger.Printf("reading the descriptor limit: %v", err)
		return
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			logger.Printf("raising the descriptor limit to %d: %v", rl.Max, err)
			return
		}
	}
}
