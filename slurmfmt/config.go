package slurmfmt

import (
	"fmt"
	"io"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// WriteConfig prints the controller's configuration as scontrol show
// config does: "Configuration data as of TIME", each key padded to 23
// characters before " = ", a blank line, then where the controller is
// and that it answered (it did: the configuration came from it).
func WriteConfig(w io.Writer, c *api.ClusterConfig, e *Env) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration data as of %s\n", e.stamp(&c.Loaded, "Unknown"))
	host := ""
	for _, kv := range c.Entries {
		fmt.Fprintf(&b, "%-23s = %s\n", kv.Key, kv.Value)
		if kv.Key == "SlurmctldHost[0]" {
			host = kv.Value
		}
	}
	fmt.Fprintf(&b, "\nSlurmctld(primary) at %s is UP\n", host)
	_, err := io.WriteString(w, b.String())
	return err
}
