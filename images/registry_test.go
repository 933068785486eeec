package images

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recordingTransport answers every request with an error, recording the
// hosts asked: a refused pull must ask none (no request, so no lookup).
type recordingTransport struct {
	mu    sync.Mutex
	hosts []string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.hosts = append(rt.hosts, r.URL.Host)
	return nil, errors.New("no network in this test")
}

// Issue 11: `--container-image nosuch:latest` made noded look up
// docker.io. A reference without a registry goes only to the first
// --image-registry, and a registry not listed is never contacted.
func TestPullGoesOnlyToConfiguredRegistries(t *testing.T) {
	tests := []struct {
		registries []string
		ref        string
		wantErr    string // "": the pull goes to wantHost
		wantHost   string
	}{
		{nil, "nosuch:latest", "image nosuch:latest names no registry and this node has no --image-registry", ""},
		{nil, "library/ubuntu", "names no registry", ""},
		{nil, "docker.io/library/ubuntu", "registry index.docker.io, which this node does not pull from (its --image-registry: none)", ""},
		{nil, "ghcr.io/org/app:1", "registry ghcr.io, which this node does not pull from", ""},
		{nil, "127.0.0.1:5000/app:1", "", "127.0.0.1:5000"},
		{nil, "localhost:5000/app:1", "", "localhost:5000"},
		{[]string{"registry.site:5000"}, "nosuch:latest", "", "registry.site:5000"},
		{[]string{"registry.site:5000", "mirror.site"}, "mirror.site/app:1", "", "mirror.site"},
		{[]string{"registry.site:5000"}, "docker.io/library/ubuntu", "(its --image-registry: registry.site:5000)", ""},
		{[]string{"registry.site:5000"}, "registry.site/app:1", "registry registry.site, which", ""}, // another port is another registry
		{[]string{"docker.io"}, "docker.io/library/ubuntu", "", "index.docker.io"},
		{[]string{"docker.io"}, "ubuntu", "", "index.docker.io"},
	}
	saved := pullTransport
	t.Cleanup(func() { pullTransport = saved })
	for _, tt := range tests {
		rt := &recordingTransport{}
		pullTransport = rt
		s := mustStore(t)
		s.Registries = tt.registries
		_, err := s.Pull(context.Background(), tt.ref)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || len(rt.hosts) != 0 {
				t.Errorf("%v: Pull(%s) = %v after asking %v; want %q and no request", tt.registries, tt.ref, err, rt.hosts, tt.wantErr)
			}
			if cerr := s.CheckPull(tt.ref); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("%v: CheckPull(%s) = %v, want Pull's refusal", tt.registries, tt.ref, cerr)
			}
			continue
		}
		if err == nil || len(rt.hosts) == 0 || rt.hosts[0] != tt.wantHost {
			t.Errorf("%v: Pull(%s) asked %v (%v); want %s", tt.registries, tt.ref, rt.hosts, err, tt.wantHost)
		}
	}
}

func TestCheckRegistry(t *testing.T) {
	for _, h := range []string{"registry.site", "registry.site:5000", "127.0.0.1:5000", "docker.io"} {
		if err := CheckRegistry(h); err != nil {
			t.Errorf("CheckRegistry(%q) = %v", h, err)
		}
	}
	for _, h := range []string{"", "registry.site/team", "user@registry.site", "https://registry.site"} {
		if err := CheckRegistry(h); err == nil {
			t.Errorf("CheckRegistry(%q) accepted", h)
		}
	}
}
