//go:build urfave_cli_no_docs && !slurmonly

package cli

import (
	"errors"

	ucli "github.com/urfave/cli/v2"
)

// docsCommand, in a corral built with urfave_cli_no_docs (as make builds
// bin/corral), only says where the generator is: leaving it out keeps
// the man-page renderer (go-md2man, blackfriday) and its start-up work
// out of every command, the Slurm names included.
func docsCommand() *ucli.Command {
	return &ucli.Command{
		Name:   "docs",
		Usage:  "generate documentation from the commands",
		Hidden: true,
		Action: func(*ucli.Context) error {
			return errors.New("this corral was built without its documentation generator: use go run ./cmd/corral docs")
		},
	}
}
