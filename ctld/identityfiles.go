package ctld

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// refuseLostIdentity stops a controller whose state directory has run
// before from making a new cluster key or CA because the old ones are
// missing: every node holds the key and pins the CA, so new ones would
// cut the cluster off while looking like a normal start. The first start
// of a directory (no state marker yet) makes them as before.
func refuseLostIdentity(cfg Config, ran bool) error {
	if !ran {
		return nil
	}
	missing := func(path string) bool {
		_, err := os.Lstat(path)
		return errors.Is(err, os.ErrNotExist)
	}
	if missing(cfg.KeyFile) {
		return fmt.Errorf("cluster key %s is missing, but a controller has run on %s: restore the key from a backup (every node holds it); a new one would lock the nodes out",
			cfg.KeyFile, cfg.StateDir)
	}
	if ca := filepath.Join(cfg.StateDir, api.CAFile); !cfg.InsecurePlaintext && missing(ca) {
		return fmt.Errorf("cluster CA %s is missing, but a controller has run on %s: restore it and its key from a backup (nodes pin this CA); "+
			"if this controller only ever ran with --insecure-plaintext, remove %s%s to start it as a new cluster",
			ca, cfg.StateDir, filepath.Join(cfg.StateDir, store.FileName), store.MarkerSuffix)
	}
	return nil
}

// loadIdentity loads the cluster key and CA, or makes them on a
// directory's first start. ran: a controller had run on the directory
// before this start.
func loadIdentity(cfg *Config, ran bool) ([]byte, *clusterTLS, error) {
	if err := refuseLostIdentity(*cfg, ran); err != nil {
		return nil, nil, err
	}
	key, err := api.LoadOrCreateKey(cfg.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster key: %w", err)
	}
	t, err := loadClusterTLS(cfg, key)
	return key, t, err
}
