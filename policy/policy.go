package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/corral-hpc/corral/internal/fsutil"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/corral-hpc/corral/api"
)

// Request is what one job holds while it runs (all nodes together).
type Request struct {
	CPUs     int
	MemBytes int64
	FGPU     int // hundredths
}

// Add returns r + o.
func (r Request) Add(o Request) Request {
	return Request{CPUs: r.CPUs + o.CPUs, MemBytes: r.MemBytes + o.MemBytes, FGPU: r.FGPU + o.FGPU}
}

// InUse is what an owner (user or account) holds now.
type InUse struct {
	Running int
	Pending int
	Request
}

// Set is the policies, keyed by kind and name, kept in a JSON file that
// is replaced atomically on every change. It is safe for concurrent use.
type Set struct {
	mu   sync.RWMutex
	path string
	m    map[key]api.Limits
}

type key struct{ kind, name string }

// Load reads the policies at path; a missing file is an empty set.
func Load(path string) (*Set, error) {
	s := &Set{path: path, m: map[key]api.Limits{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var list []api.Policy
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("policies %s: %w", path, err)
	}
	for _, p := range list {
		if err := Validate(p); err != nil {
			return nil, fmt.Errorf("policies %s: %w", path, err)
		}
		s.m[key{p.Kind, p.Name}] = p.Limits
	}
	return s, nil
}

// Validate checks a policy's kind, name and limits.
func Validate(p api.Policy) error {
	switch {
	case p.Kind != api.PolicyUser && p.Kind != api.PolicyAccount:
		return fmt.Errorf("policy kind %q: use user or account", p.Kind)
	case p.Name == "" || len(p.Name) > 256:
		return errors.New("a policy needs a name (a user or account)")
	}
	l := p.Limits
	if l.MaxRunningJobs < 0 || l.MaxPendingJobs < 0 || l.MaxCPUs < 0 || l.MaxMemBytes < 0 || l.MaxFGPU < 0 ||
		l.MaxCPUsPerJob < 0 || l.MaxMemPerJob < 0 || l.MaxFGPUPerJob < 0 {
		return fmt.Errorf("policy %s %s: limits must not be negative", p.Kind, p.Name)
	}
	return nil
}

// List returns every policy, sorted by kind and name.
func (s *Set) List() []api.Policy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]api.Policy, 0, len(s.m))
	for k, l := range s.m {
		out = append(out, api.Policy{Kind: k.kind, Name: k.name, Limits: l})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Put creates or replaces p (all-zero limits remove it) and saves the set
// before returning; on a save error nothing changed.
func (s *Set) Put(p api.Policy) error {
	if err := Validate(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{p.Kind, p.Name}
	old, had := s.m[k]
	if p.Limits == (api.Limits{}) {
		delete(s.m, k)
	} else {
		s.m[k] = p.Limits
	}
	if err := s.saveLocked(); err != nil {
		if had {
			s.m[k] = old
		} else {
			delete(s.m, k)
		}
		return err
	}
	return nil
}

// Limits returns the limits of user and of account (zero when none).
func (s *Set) Limits(user, account string) (u, a api.Limits) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[key{api.PolicyUser, user}], s.m[key{api.PolicyAccount, account}]
}

func (s *Set) saveLocked() error {
	list := make([]api.Policy, 0, len(s.m))
	for k, l := range s.m {
		list = append(list, api.Policy{Kind: k.kind, Name: k.name, Limits: l})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Kind+"/"+list[i].Name < list[j].Kind+"/"+list[j].Name })
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(s.path, append(b, '\n'), 0o600)
}

// Empty reports whether there is no policy at all.
func (s *Set) Empty() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.m) == 0
}
