//go:build !slurmonly

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// App builds the corral application. Output goes to app.Writer and
// app.ErrWriter (stdout and stderr unless a caller replaces them).
func App() *ucli.App {
	app := &ucli.App{
		Name:                 "corral",
		Usage:                "submit and manage batch jobs on a corral cluster",
		UsageText:            "corral [--socket PATH] COMMAND [options] [arguments]",
		HideVersion:          true,
		EnableBashCompletion: false,
		Flags:                append([]ucli.Flag{socketFlag()}, remoteFlags()...), // remote.go: --ctld, --ca
		Commands: []*ucli.Command{
			submitCommand(),
			queueCommand(),
			showCommand(),
			cancelCommand(),
			holdCommand(), releaseCommand(), requeueCommand(), updateCommand(), // control.go
			acctCommand(),
			prioCommand(), shareCommand(), // prio.go, share.go
			simCommand(),
			nodesCommand(),
			imageCommand(), logCommand(), usageCommand(), policyCommand(), // image.go, log.go, usage.go, policy.go
			devCommand(),
			srunCommand(),
			sallocCommand(),
			adminCommand(), // admin.go: backup
			dashboardCommand(),
			completionCommand(), docsCommand(),
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("unknown command %q (try corral --help)", c.Args().First())
			}
			return usageErrorf("missing command (try corral --help)")
		},
		OnUsageError: onUsageError(""),
		// Run prints errors itself; never let urfave print or exit.
		ExitErrHandler: func(*ucli.Context, error) {},
	}
	for _, cmd := range app.Commands {
		prepare(cmd, cmd.Name)
	}
	return app
}

// prepare gives every command the same error behaviour.
func prepare(cmd *ucli.Command, path string) {
	cmd.OnUsageError = onUsageError(path)
	if cmd.Action != nil {
		action := cmd.Action
		cmd.Action = func(c *ucli.Context) error {
			if err := action(c); err != nil {
				return &commandError{cmd: path, err: err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Subcommands {
		prepare(sub, path+" "+sub.Name)
	}
}

// Run runs app with args (args[0] is the program name) and returns the exit
// status: 0 ok, 1 the operation failed, 2 bad usage or input. Errors are
// printed as one line on app.ErrWriter.
func Run(ctx context.Context, app *ucli.App, args []string) int {
	if app.ErrWriter == nil {
		app.ErrWriter = ucli.ErrWriter
	}
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err == nil {
		return 0
	}
	var quiet exitStatus
	if errors.As(err, &quiet) {
		return int(quiet)
	}
	msg, code := describe(err)
	fmt.Fprintln(app.ErrWriter, msg)
	return code
}

// describe turns an error into its one line and exit status.
func describe(err error) (string, int) {
	cmd := ""
	var ce *commandError
	if errors.As(err, &ce) {
		cmd, err = ce.cmd, ce.err
	}
	prefix := "corral: "
	if cmd != "" {
		prefix = "corral " + cmd + ": "
	}
	code := 1
	var ue usageError
	var se *api.StatusError
	switch {
	case errors.Is(err, api.ErrUnreachable):
		prefix = "corral: " // not the command's fault, nor the user's
	case errors.As(err, &ue):
		code = 2
	case errors.As(err, &se) && se.Code == http.StatusBadRequest:
		code = 2 // the controller judged the input bad
	}
	return prefix + oneLine(err.Error()), code
}

func onUsageError(path string) ucli.OnUsageErrorFunc {
	return func(_ *ucli.Context, err error, _ bool) error {
		return &commandError{cmd: path, err: usageError{errors.New(flagErrorText(err))}}
	}
}

// flagErrorText rewrites the flag package's messages in our words.
func flagErrorText(err error) string {
	s := err.Error()
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: "); ok {
		return "unrecognized option " + dashes(name)
	}
	if name, ok := strings.CutPrefix(s, "flag needs an argument: "); ok {
		return "option " + dashes(name) + " needs a value"
	}
	// invalid value "x" for flag -n: parse error
	if rest, ok := strings.CutPrefix(s, "invalid value "); ok {
		value, name, found := strings.Cut(rest, " for flag ")
		if found {
			name, _, _ = strings.Cut(name, ":")
			return "invalid " + dashes(name) + " " + value
		}
	}
	return s
}

// dashes spells a flag the way the user most likely typed it.
func dashes(name string) string {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// socketFlag is --socket, accepted globally and by every command.
func socketFlag() ucli.Flag {
	return &ucli.StringFlag{
		Name:      "socket",
		Usage:     "controller socket (default $" + api.SocketEnv + " or " + api.DefaultSocket + ")",
		TakesFile: true,
	}
}

// explicitSocket is --socket as given after the command or before it; ""
// when neither was given.
func explicitSocket(c *ucli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.Command != nil && cc.IsSet("socket") {
			return cc.String("socket")
		}
	}
	return ""
}

func client(c *ucli.Context, override string) *api.Client {
	if override == "" {
		override = explicitSocket(c)
	}
	if base := remoteURL(c); override == "" && base != "" { // remote.go
		return remoteClient(c, base)
	}
	return api.NewClient(api.ResolveSocket(override))
}

func requestContext(c *ucli.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Context, requestTimeout)
}

// noArgs refuses positional arguments a command does not take.
func noArgs(c *ucli.Context) error {
	if c.Args().Present() {
		return usageErrorf("unexpected argument %q", c.Args().First())
	}
	return nil
}

// out is where a command prints its results.
func out(c *ucli.Context) io.Writer { return c.App.Writer }

// remoteFlags are --ctld and --ca: reach the controller over TCP from a
// login node, proving who you are with a credential from the local
// corral-noded (docs/security.md).
func remoteFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "ctld", Usage: "reach the controller over TCP at this `URL` (https://host:6817) with a credential from the local corral-noded (default $" + api.CtldEnv + "; --socket wins)"},
		&ucli.StringFlag{Name: "ca", Usage: "cluster CA `FILE` pinned for --ctld (default $" + CAEnv + ", else /etc/corral/ca.pem)", TakesFile: true},
	}
}

// remoteURL is --ctld or $CORRAL_CTLD; "" means the Unix socket.
func remoteURL(c *ucli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.IsSet("ctld") {
			return cc.String("ctld")
		}
	}
	return os.Getenv(api.CtldEnv)
}

func caPath(c *ucli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.IsSet("ca") {
			return cc.String("ca")
		}
	}
	return envCAPath()
}

// remoteClient is the TCP client for base. A setup error (a bad URL, no
// CA) comes back from the first request, as one line.
func remoteClient(c *ucli.Context, base string) *api.Client {
	return remoteClientWith(base, caPath(c))
}

// commandError ties an error to the command that failed, for its prefix.
type commandError struct {
	cmd string
	err error
}

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }
