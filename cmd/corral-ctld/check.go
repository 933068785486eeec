package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/corral-hpc/corral/ctld/store"
)

// checkState is --check: verify the state file without starting, with a
// one-line verdict (on w when sound; as the error, and exit 1, when not).
// A running controller holds the file's lock, so checking its live file
// fails; check a copy from `corral admin backup` instead.
func checkState(w io.Writer, stateDir string) error {
	path := filepath.Join(stateDir, store.FileName)
	rep, err := store.Check(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "corral-ctld: state file %s is sound: %d jobs, %d arrays, %d nodes, %d steps, last job ID %d, %d bytes\n",
		path, rep.Jobs, rep.Arrays, rep.Nodes, rep.Steps, rep.LastJobID, rep.Bytes)
	return nil
}
