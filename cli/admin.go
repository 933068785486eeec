//go:build !slurmonly

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// backupTimeout bounds a backup: far longer than requestTimeout, as a
// state file of millions of jobs takes a while to stream.
const backupTimeout = 30 * time.Minute

// The controller's backup route and its length trailer (ctld.BackupPath
// and ctld.BackupBytesTrailer; not imported, to keep the controller out
// of the CLI binary; the e2e survival test runs the two together).
const (
	backupPath         = "/v1/admin/backup"
	backupBytesTrailer = "Corral-Backup-Bytes"
)

func adminCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "admin",
		Usage: "controller administration (administrators only)",
		Subcommands: []*ucli.Command{
			{
				Name:  "backup",
				Usage: "write a consistent copy of the controller's state file while it runs",
				UsageText: "corral admin backup FILE\n\n" +
					"The copy is verified, then moved into place atomically: FILE is either the\n" +
					"old file or a complete, checked copy. corral-ctld starts from it when it is\n" +
					"placed as ctld.db in an empty state directory (see docs/operations.md).",
				Flags:  []ucli.Flag{socketFlag()},
				Action: adminBackup,
			},
		},
	}
}

func adminBackup(c *ucli.Context) error {
	if c.NArg() != 1 || c.Args().First() == "" {
		return usageErrorf("expected exactly one argument: the FILE to write")
	}
	dest := c.Args().First()
	ctx, cancel := context.WithTimeout(c.Context, backupTimeout)
	defer cancel()
	rep, err := backupTo(ctx, client(c, "").Socket, dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(out(c), "wrote %s: %d jobs, %d arrays, %d nodes, %d steps, last job ID %d, %d bytes\n",
		dest, rep.Jobs, rep.Arrays, rep.Nodes, rep.Steps, rep.LastJobID, rep.Bytes)
	return nil
}

// backupTo streams the backup into a temporary file beside dest, checks
// its length and its contents (store.Check), syncs it and renames it over
// dest. On any failure the temporary file is removed and dest is as it
// was.
func backupTo(ctx context.Context, socket, dest string) (rep store.Report, err error) {
	dir := filepath.Dir(dest)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".partial-*")
	if err != nil {
		return rep, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := fetchBackup(ctx, socket, tmp)
	if err != nil {
		return rep, err
	}
	if err := tmp.Sync(); err != nil {
		return rep, err
	}
	if err := tmp.Close(); err != nil {
		return rep, err
	}
	if rep, err = store.Check(tmp.Name()); err != nil {
		return rep, fmt.Errorf("the copy received (%d bytes) does not verify, nothing written: %w", n, err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return rep, err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return rep, err
	}
	if d, derr := os.Open(dir); derr == nil { // the rename itself durable
		d.Sync()
		d.Close()
	}
	return rep, nil
}

// openGET GETs path over the user socket and returns the response of a
// 200, for the caller to stream and close; any other status is the
// controller's error. For answers too big to hold twice in memory, which
// api.Client (it reads whole answers) is not made for.
func openGET(ctx context.Context, socket, path string) (*http.Response, error) {
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://corral"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", api.ErrUnreachable, socket, errors.Unwrap(err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var e api.Error
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = resp.Status
		}
		return nil, &api.StatusError{Code: resp.StatusCode, Message: e.Error}
	}
	return resp, nil
}

// fetchBackup GETs the backup over the user socket into w and checks that
// every byte the controller sent arrived.
func fetchBackup(ctx context.Context, socket string, w io.Writer) (int64, error) {
	resp, err := openGET(ctx, socket, backupPath)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("receiving the copy after %d bytes: %w", n, err)
	}
	want, err := strconv.ParseInt(resp.Trailer.Get(backupBytesTrailer), 10, 64)
	if err != nil || want != n {
		return n, fmt.Errorf("the controller did not finish the copy (%d bytes received; see its log), nothing written", n)
	}
	return n, nil
}
