package jobspec

import (
	"fmt"

	"github.com/corral-hpc/corral/api"
)

// applyApp is --app NAME=PORT: one more web app, under a name not taken.
func applyApp(r *Request, v string) error {
	a, err := api.ParseApp(v)
	if err != nil {
		return fmt.Errorf("invalid --app: %v", err)
	}
	for _, o := range r.Spec.Apps {
		if o.Name == a.Name {
			return fmt.Errorf("invalid --app %s: an app is already named %s", quoteValue(v), a.Name)
		}
	}
	r.Spec.Apps = append(r.Spec.Apps, a)
	return nil
}

// appProblems judges a spec's apps as sent (the controller sees them
// without the CLI's parsing): each valid, names and ports distinct.
func appProblems(apps []api.App) api.Problems {
	var p api.Problems
	if len(apps) > api.MaxApps {
		return append(p, fmt.Errorf("--app: at most %d apps per job, not %d", api.MaxApps, len(apps)))
	}
	names, ports := map[string]bool{}, map[int]string{}
	for _, a := range apps {
		if err := api.CheckApp(a); err != nil {
			p = append(p, fmt.Errorf("invalid --app: %v", err))
			continue
		}
		if names[a.Name] {
			p = append(p, fmt.Errorf("invalid --app: two apps are named %s", a.Name))
		}
		if other, ok := ports[a.Port]; ok {
			p = append(p, fmt.Errorf("invalid --app: %s and %s both use port %d", other, a.Name, a.Port))
		}
		names[a.Name], ports[a.Port] = true, a.Name
	}
	return p
}
