//go:build !slurmonly

package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"
)

// dashboardCommand is `corral dashboard`: a one-time link that signs the
// caller in to the controller's dashboard (the socket says who is asking).
func dashboardCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "dashboard",
		Usage:     "print a one-time link that signs you in to the web dashboard (valid for a minute)",
		UsageText: "corral dashboard [--logout-all]",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "logout-all", Usage: "end all your dashboard sessions instead"},
			socketFlag(),
		},
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ctx, cancel := requestContext(c)
			defer cancel()
			cl := client(c, "")
			if c.Bool("logout-all") {
				r, err := cl.DashboardLogoutAll(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(out(c), "ended %d dashboard session(s)\n", r.Sessions)
				return nil
			}
			l, err := cl.DashboardLogin(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintln(out(c), l.URL)
			return nil
		},
	}
}
