package cli

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// The filter words corral's commands and the Slurm names both take: users
// (--me), job states, job IDs, comma lists.

// withMe is users, plus the caller with me, each once.
func withMe(users []string, me bool) ([]string, error) {
	if me {
		name, err := currentUser()
		if err != nil {
			return nil, err
		}
		users = append(users, name)
	}
	return dedupe(users), nil
}

// addStates adds the states named (names, short codes or "all") to f.
// Finished jobs are only listed on request; asking for a finished state
// is such a request.
func addStates(f *api.JobFilter, words []string) error {
	for _, s := range words {
		if strings.EqualFold(s, "all") {
			f.All = true
			continue
		}
		if strings.EqualFold(s, "CG") || strings.EqualFold(s, "COMPLETING") { // a flag, not a state (docs/steps.md)
			f.Completing = true
			continue
		}
		st, err := api.ParseJobState(s)
		if err != nil {
			return err
		}
		f.States = append(f.States, st)
		f.All = f.All || st.Terminal()
	}
	f.States = dedupeStates(f.States)
	return nil
}

// commaList flattens repeated, comma-separated option values.
func commaList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func dedupeStates(in []api.JobState) []api.JobState {
	seen := map[api.JobState]bool{}
	var out []api.JobState
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func parseJobIDs(words []string) ([]uint64, error) {
	var ids []uint64
	for _, w := range words {
		id, err := strconv.ParseUint(w, 10, 64)
		if err != nil || id == 0 {
			return nil, usageErrorf("invalid job id %q: use a positive number", w)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// currentUser is the name the controller knows this user by.
func currentUser() (string, error) {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if name := os.Getenv("USER"); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("cannot tell who you are (uid %d has no user name)", os.Getuid())
}
