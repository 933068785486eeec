package cli

import (
	"os"
	"path/filepath"

	"github.com/corral-hpc/corral/api"
)

// CAEnv names the environment variable giving the cluster CA for --ctld.
const CAEnv = "CORRAL_CA"

// envCAPath is $CORRAL_CA, else the installed CA.
func envCAPath() string {
	if p := os.Getenv(CAEnv); p != "" {
		return p
	}
	return filepath.Join("/etc/corral", api.CAFile)
}

// remoteClientWith is the TCP client for base, with the CA file ca. A
// setup error (a bad URL, no CA) comes back from the first request, as
// one line.
func remoteClientWith(base, ca string) *api.Client {
	cl, err := func() (*api.Client, error) {
		pool, err := api.LoadCAPool(ca)
		if err != nil {
			return nil, err
		}
		return api.NewRemoteClient(base, "", api.ClientTLS(pool))
	}()
	if err != nil {
		return api.NewFailingClient(base, err)
	}
	return cl
}
