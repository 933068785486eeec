//go:build !slurmonly

package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// imageTimeout bounds a pull or import through ctld (big images are slow).
const imageTimeout = 30 * time.Minute

func imageCommand() *ucli.Command {
	nodesFlag := &ucli.StringSliceFlag{Name: "node", Aliases: []string{"w"}, Usage: "only on these nodes (default: every node that is up)"}
	return &ucli.Command{
		Name:  "image",
		Usage: "manage the container images on the nodes (list, pull, import, rm)",
		Subcommands: []*ucli.Command{
			{Name: "list", Aliases: []string{"ls"}, Usage: "list the images and the nodes holding them", UsageText: "corral image list [--json]",
				Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "print a JSON array"}, socketFlag()}, Action: listImages},
			{Name: "pull", Usage: "pull an image from its registry onto nodes (admin)", UsageText: "corral image pull REF [--node NODE]...",
				Flags: []ucli.Flag{nodesFlag, socketFlag()}, Action: imageOp(api.ImagePull, 1)},
			{Name: "import", Usage: "import NAME:TAG from SOURCE, a path on the nodes: OCI layout (dir or tar), docker save archive or root file system directory (admin)",
				UsageText: "corral image import NAME:TAG SOURCE [--node NODE]...",
				Flags:     []ucli.Flag{nodesFlag, socketFlag()}, Action: imageOp(api.ImageImport, 2)},
			{Name: "rm", Usage: "remove an image from nodes (admin)", UsageText: "corral image rm REF [--node NODE]...",
				Flags: []ucli.Flag{nodesFlag, socketFlag()}, Action: imageOp(api.ImageRemove, 1)},
		},
	}
}

func listImages(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	ctx, cancel := requestContext(c)
	defer cancel()
	list, err := client(c, "").Images(ctx)
	if err != nil {
		return err
	}
	if list == nil {
		list = []api.Image{}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Ref < list[j].Ref })
	if c.Bool("json") {
		return writeJSON(out(c), list)
	}
	rows := make([][]string, 0, len(list))
	for _, im := range list {
		rows = append(rows, []string{im.Ref, shortID(im.ID), formatSize(im.Size), strings.Join(im.Nodes, ",")})
	}
	return writeTable(out(c), []string{"IMAGE", "ID", "SIZE", "NODES"}, rows)
}

func imageOp(op string, nargs int) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if c.NArg() != nargs {
			return usageErrorf("expected %d argument(s), got %d (see corral image %s --help)", nargs, c.NArg(), op)
		}
		req := api.ImageRequest{Op: op, Ref: c.Args().Get(0), Nodes: c.StringSlice("node")}
		if op == api.ImageImport {
			src := c.Args().Get(1)
			if !filepath.IsAbs(src) {
				return usageErrorf("SOURCE %q must be an absolute path (it is read on the nodes)", src)
			}
			req.Source = src
		}
		ctx, cancel := context.WithTimeout(c.Context, imageTimeout)
		defer cancel()
		res, err := client(c, "").ImageOp(ctx, req)
		if err != nil {
			return err
		}
		failed := 0
		for _, r := range res {
			if r.Error != "" {
				failed++
				fmt.Fprintf(c.App.ErrWriter, "corral image %s: %s: %s\n", op, r.Node, r.Error)
				continue
			}
			if op == api.ImageRemove {
				fmt.Fprintf(out(c), "%s: removed %s\n", r.Node, r.Image.Ref)
			} else {
				fmt.Fprintf(out(c), "%s: %s %s\n", r.Node, r.Image.Ref, shortID(r.Image.ID))
			}
		}
		if failed > 0 {
			return exitStatus(1)
		}
		return nil
	}
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
