package images

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// A reference's registry decides where a pull goes, and
// go-containerregistry sends every reference that names none ("app:1",
// "library/app") to Docker Hub. A node that pulled a user's typo from a
// public registry would send the name off the site (a DNS lookup of
// docker.io at least) and might run whatever image answered. So a Store
// pulls only from the registries its administrator listed (Store.
// Registries, corral-noded --image-registry): a reference without a
// registry resolves to the first of them, one naming another registry is
// refused, and with none listed a reference without a registry is
// refused before any lookup. Loopback registries (localhost, 127.0.0.1,
// ::1) are always allowed: nothing leaves the host.

// pullTransport is what Pull talks to registries through (tests replace
// it to prove that a refused pull touches no network).
var pullTransport = remote.DefaultTransport

// CheckRegistry validates a --image-registry value: a host name or
// address, with an optional port.
func CheckRegistry(host string) error {
	if host == "" || strings.ContainsAny(host, "/@ ") {
		return fmt.Errorf("--image-registry %q must be a registry host[:port], without a path", host)
	}
	if _, err := name.NewRegistry(host); err != nil {
		return fmt.Errorf("--image-registry %q: %v", host, err)
	}
	return nil
}

// namesRegistry reports whether ref starts with a registry host, by the
// rule go-containerregistry and Docker use: the first path component has
// a dot or a port, or is "localhost".
func namesRegistry(ref string) bool {
	first, _, found := strings.Cut(ref, "/")
	return found && (strings.ContainsAny(first, ".:") || first == "localhost")
}

// CheckPull says why Pull would refuse ref by its registry, without any
// lookup (nil: it may be pulled).
func (s *Store) CheckPull(ref string) error {
	_, err := s.resolvePull(ref)
	return err
}

// resolvePull returns what Pull fetches for ref, or why it may not.
func (s *Store) resolvePull(ref string) (name.Reference, error) {
	full := ref
	if !namesRegistry(ref) {
		if len(s.Registries) == 0 {
			return nil, fmt.Errorf("image %s names no registry and this node has no --image-registry", ref)
		}
		full = s.Registries[0] + "/" + ref
	}
	r, err := name.ParseReference(full, name.WithDefaultTag("latest"))
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %v", ref, err)
	}
	reg := r.Context().RegistryStr()
	if isLoopback(reg) {
		return r, nil
	}
	allowed := slices.ContainsFunc(s.Registries, func(h string) bool {
		nr, err := name.NewRegistry(h)
		return err == nil && nr.RegistryStr() == reg
	})
	if !allowed {
		listed := "none"
		if len(s.Registries) > 0 {
			listed = strings.Join(s.Registries, ", ")
		}
		return nil, fmt.Errorf("image %s is on registry %s, which this node does not pull from (its --image-registry: %s)", ref, reg, listed)
	}
	return r, nil
}

// isLoopback: host[:port] is this host.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
