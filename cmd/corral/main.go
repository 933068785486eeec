// Command corral is the user's command line for a corral cluster.
package main

import (
	"context"
	"os"

	"github.com/corral-hpc/corral/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), cli.App(), os.Args))
}
