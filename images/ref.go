package images

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Canonical turns a user's image reference into the store's key:
// repository:tag ("tensorflow:2.2", "127.0.0.1:5000/team/app:1"), or
// repository@digest. Docker Hub's registry and "library/" prefix are
// dropped and a missing tag is "latest", so "ubuntu", "ubuntu:latest"
// and "docker.io/library/ubuntu:latest" are the same image.
func Canonical(ref string) (string, error) {
	r, err := name.ParseReference(ref, name.WithDefaultTag("latest"))
	if err != nil {
		return "", fmt.Errorf("invalid image reference %q: %v", ref, strings.TrimPrefix(err.Error(), "could not parse reference: "))
	}
	repo := r.Context().RepositoryStr()
	if reg := r.Context().RegistryStr(); reg != name.DefaultRegistry {
		repo = reg + "/" + repo
	} else {
		repo = strings.TrimPrefix(repo, "library/")
	}
	switch t := r.(type) {
	case name.Tag:
		return repo + ":" + t.TagStr(), nil
	case name.Digest:
		return repo + "@" + t.DigestStr(), nil
	}
	return "", fmt.Errorf("invalid image reference %q", ref)
}
