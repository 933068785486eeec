package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/images"
	"github.com/corral-hpc/corral/noded"
)

func imageStoreFlag() cli.Flag {
	return &cli.StringFlag{Name: "image-store", Value: noded.DefaultImageStore, Usage: "the node's image store directory"}
}

func imageRegistryFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "image-registry", Usage: "registry `HOST[:PORT]` images may be pulled from; the first also serves names without a registry " +
		"(repeatable; none: only loopback registries, and a name without a registry is refused; see docs/environments.md)"}
}

// imageCommand manages this host's image store directly (as root on the
// node); `corral image` does the same through ctld for every node.
func imageCommand() *cli.Command {
	store := func(c *cli.Context) (*images.Store, error) {
		if os.Geteuid() != 0 {
			return nil, errors.New("must run as root: the image store belongs to corral-noded")
		}
		for _, h := range c.StringSlice("image-registry") {
			if err := images.CheckRegistry(h); err != nil {
				return nil, err
			}
		}
		st, err := images.Open(c.String("image-store"))
		if err == nil {
			st.Registries = c.StringSlice("image-registry")
		}
		return st, err
	}
	args := func(c *cli.Context, n int, usage string) error {
		if c.NArg() != n {
			return fmt.Errorf("usage: corral-noded image %s", usage)
		}
		return nil
	}
	show := func(im images.Image) { fmt.Printf("%s\t%s\n", im.Ref, short(im.ID)) }
	return &cli.Command{
		Name:  "image",
		Usage: "manage this host's image store (import, pull, list, rm)",
		Flags: []cli.Flag{imageStoreFlag(), imageRegistryFlag()},
		Subcommands: []*cli.Command{
			{Name: "import", ArgsUsage: "NAME:TAG SOURCE", Usage: "store an OCI layout (dir or tar), a docker save archive or a root file system directory",
				Action: func(c *cli.Context) error {
					if err := args(c, 2, "import NAME:TAG SOURCE"); err != nil {
						return err
					}
					s, err := store(c)
					if err != nil {
						return err
					}
					im, err := s.Import(c.Context, c.Args().Get(0), c.Args().Get(1))
					if err == nil {
						show(im)
					}
					return err
				}},
			{Name: "pull", ArgsUsage: "REF", Usage: "pull an image from its registry",
				Action: func(c *cli.Context) error {
					if err := args(c, 1, "pull REF"); err != nil {
						return err
					}
					s, err := store(c)
					if err != nil {
						return err
					}
					ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
					defer stop()
					im, err := s.Pull(ctx, c.Args().Get(0))
					if err == nil {
						show(im)
					}
					return err
				}},
			{Name: "list", Aliases: []string{"ls"}, Usage: "list the stored images",
				Action: func(c *cli.Context) error {
					if err := args(c, 0, "list"); err != nil {
						return err
					}
					s, err := store(c)
					if err != nil {
						return err
					}
					list, err := s.List()
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "IMAGE\tID\tSIZE\tCREATED\tSOURCE")
					for _, im := range list {
						fmt.Fprintf(tw, "%s\t%s\t%dM\t%s\t%s\n", im.Ref, short(im.ID), (im.Size+(1<<20)-1)>>20, im.Created.Local().Format(time.DateTime), im.Source)
					}
					return tw.Flush()
				}},
			{Name: "rm", ArgsUsage: "REF", Usage: "remove an image (its files go with its last name)",
				Action: func(c *cli.Context) error {
					if err := args(c, 1, "rm REF"); err != nil {
						return err
					}
					s, err := store(c)
					if err != nil {
						return err
					}
					im, err := s.Remove(c.Args().Get(0))
					if err == nil {
						fmt.Println("removed", im.Ref)
					}
					return err
				}},
		},
	}
}

func short(id string) string {
	if len(id) > 19 {
		return id[7:19]
	}
	return id
}
