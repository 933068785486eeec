package cli

import (
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/api"
)

// CAEnv names the environment variable giving the cluster CA for --ctld.
const CAEnv = "CORRAL_CA"

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

// envCAPath is $CORRAL_CA, else the installed CA.
func envCAPath() string {
	if p := os.Getenv(CAEnv); p != "" {
		return p
	}
	return filepath.Join("/etc/corral", api.CAFile)
}

// remoteClient is the TCP client for base. A setup error (a bad URL, no
// CA) comes back from the first request, as one line.
func remoteClient(c *ucli.Context, base string) *api.Client {
	return remoteClientWith(base, caPath(c))
}

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
