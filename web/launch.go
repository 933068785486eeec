package web

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/jobspec"
)

// The launch dialog (seed 002): environment and version, resource group,
// session name, a folder to mount, a resource template (an admin's
// preset, corral.conf's ResourceTemplate), CPU, memory, shared memory and
// fGPU within what the user may hold and the largest node has, and how
// many identical sessions to start at once. Without a command or a script
// a session is interactive: it lives until terminated or its time limit.
// Every launch is an ordinary submit as the user, which the page also
// shows as the equivalent `corral submit` command.

// maxSessions bounds the Sessions slider.
const maxSessions = 10

// sessionName is the seed's rule for a session's name.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9]{4,64}$`)

// interactiveScript keeps an interactive session's container up; the
// terminal and apps reach it as steps.
const interactiveScript = "#!/bin/sh\n# an interactive session: it lives until terminated or its time limit\nwhile :; do sleep 3600; done\n"

// launchView is what the dialog shows.
type launchView struct {
	CSRF       string
	Envs       []environment // the images, by environment
	Groups     []string
	Group      string
	Templates  []api.ResourceTemplate
	MountRoots []string // where the nodes allow --mount sources
	MaxCPUs    int
	MaxMemMiB  int64
	MaxFGPU    float64 // in GPUs
	Max        int     // sessions
	MaxScript  int     // bytes
	Problem    string
	Form       launchForm
	ImageApps  []imageApps // apps.go
}

// environment is an image repository and its versions (tags), as the
// seed's dialog offers "environment" and "version".
type environment struct {
	Name     string
	Versions []version
}

type version struct{ Ref, Tag string }

// environments groups image references (name:tag) by name, in order.
func environments(refs []string) []environment {
	slices.Sort(refs)
	var out []environment
	for _, ref := range refs {
		name, tag := ref, "latest"
		if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
			name, tag = ref[:i], ref[i+1:]
		}
		if n := len(out); n == 0 || out[n-1].Name != name {
			out = append(out, environment{Name: name})
		}
		out[len(out)-1].Versions = append(out[len(out)-1].Versions, version{Ref: ref, Tag: tag})
	}
	return out
}

// launchForm is the dialog's fields, as sent.
type launchForm struct {
	Image, Group, Name, Mount, Command string
	Template                           string // a resource template's name: its resources win over the sliders
	CPUs                               int
	MemMiB, ShmMiB                     int64
	FGPU                               float64
	Sessions                           int
	Script                             string // an uploaded batch script
	ScriptName                         string // its file name, for the equivalent command
	mount                              *api.Mount
	Apps                               string    // NAME=PORT, ... (apps.go)
	apps                               []api.App // Apps, read
}

// launchPage shows the dialog; ?template=NAME fills the sliders with
// that template's resources (the choice works without scripts too).
func (d *Dashboard) launchPage(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	f := launchForm{CPUs: 1, MemMiB: 1024, Sessions: 1, Template: r.URL.Query().Get("template")}
	d.showLaunch(w, r, sess, f, "", http.StatusOK)
}

func (d *Dashboard) showLaunch(w http.ResponseWriter, r *http.Request, sess *session, f launchForm, problem string, code int) {
	v, err := d.launchChoices(r.Context(), d.cfg.Controller.As(sess.uid))
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	if f.Template != "" {
		if err := f.applyTemplate(v.Templates); err != nil && problem == "" {
			problem, code = err.Error(), http.StatusBadRequest
		}
	}
	v.CSRF, v.Form, v.Problem = sess.csrf, f, problem
	if f.Group == "" {
		v.Form.Group = v.Group
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, "launch.html", v); err != nil {
		d.cfg.Logger.Printf("dashboard: %v", err)
	}
}

// launchChoices reads the images, groups, templates and bounds the
// dialog offers.
func (d *Dashboard) launchChoices(ctx context.Context, c *api.Client) (launchView, error) {
	v := launchView{Max: maxSessions, MaxScript: api.MaxScriptBytes}
	images, err := c.Images(ctx)
	if err != nil {
		return v, err
	}
	refs := make([]string, len(images))
	for i, im := range images {
		refs[i] = im.Ref
	}
	v.ImageApps = declaredApps(images)
	v.Envs = environments(refs)
	parts, err := c.Partitions(ctx)
	if err != nil {
		return v, err
	}
	v.Group, v.Groups = group(parts, "")
	if v.Templates, err = c.Templates(ctx); err != nil {
		return v, err
	}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return v, err
	}
	for _, n := range nodes {
		v.MaxCPUs = max(v.MaxCPUs, n.CPUs)
		v.MaxMemMiB = max(v.MaxMemMiB, n.MemBytes>>20)
		v.MaxFGPU = max(v.MaxFGPU, float64(n.FGPUHundredths)/100)
		v.MountRoots = append(v.MountRoots, n.MountRoots...)
	}
	slices.Sort(v.MountRoots)
	v.MountRoots = slices.Compact(v.MountRoots)
	usage, err := c.UsageFor(ctx, "", false)
	if err != nil {
		return v, err
	}
	if len(usage.Users) > 0 { // the policy bounds the sliders too
		a := usage.Users[0].Allowed
		if a.CPUs > 0 {
			v.MaxCPUs = min(v.MaxCPUs, a.CPUs)
		}
		if a.MemBytes > 0 {
			v.MaxMemMiB = min(v.MaxMemMiB, a.MemBytes>>20)
		}
		if a.FGPU > 0 {
			v.MaxFGPU = min(v.MaxFGPU, float64(a.FGPU)/100)
		}
	}
	v.MaxCPUs, v.MaxMemMiB = max(v.MaxCPUs, 1), max(v.MaxMemMiB, 1)
	return v, nil
}

// launch submits the dialog's sessions as the user. The first is checked
// as a test submit, so a launch the controller would refuse creates
// nothing.
func (d *Dashboard) launch(w http.ResponseWriter, r *http.Request, sess *session, _ string) {
	c := d.cfg.Controller.As(sess.uid)
	templates, err := c.Templates(r.Context())
	if err != nil {
		d.apiProblem(w, err)
		return
	}
	f, err := readLaunchForm(r.PostForm, templates)
	if err == nil {
		err = f.readScript(r)
	}
	if err != nil {
		d.showLaunch(w, r, sess, f, err.Error(), http.StatusBadRequest)
		return
	}
	if err := imageAppsIfNone(r.Context(), c, &f); err != nil {
		d.apiProblem(w, err)
		return
	}
	home := d.cfg.Controller.Home(sess.uid)
	if _, err := c.TestSubmit(r.Context(), api.SubmitRequest{Spec: f.spec(home)}); err != nil {
		d.showLaunch(w, r, sess, f, refusal(err), http.StatusBadRequest)
		return
	}
	for i := range f.Sessions {
		if _, err := c.Submit(r.Context(), api.SubmitRequest{Spec: f.spec(home)}); err != nil {
			d.showLaunch(w, r, sess, f, fmt.Sprintf("%d of %d sessions started; the next was refused: %s", i, f.Sessions, refusal(err)), http.StatusBadRequest)
			return
		}
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func refusal(err error) string {
	if se, ok := err.(*api.StatusError); ok {
		return se.Message
	}
	return err.Error()
}

// readLaunchForm checks the dialog's fields, naming the first one wrong.
// A chosen template's resources replace the sliders'.
func readLaunchForm(v url.Values, templates []api.ResourceTemplate) (launchForm, error) {
	f := launchForm{Image: v.Get("image"), Group: v.Get("group"), Name: strings.TrimSpace(v.Get("name")),
		Mount: strings.TrimSpace(v.Get("mount")), Command: strings.TrimSpace(v.Get("command")), Template: v.Get("template")}
	var err error
	num := func(field string, dst *int64, lo, hi int64) {
		if err != nil {
			return
		}
		n, perr := strconv.ParseInt(v.Get(field), 10, 64)
		if perr != nil || n < lo || n > hi {
			err = fmt.Errorf("%s: give a whole number from %d to %d", field, lo, hi)
		}
		*dst = n
	}
	var cpus, sessions int64
	if f.Template == "" {
		num("cpus", &cpus, 1, 1<<16)
		num("mem_mib", &f.MemMiB, 1, 1<<30)
		if v.Get("shm_mib") != "" {
			num("shm_mib", &f.ShmMiB, 0, 1<<30)
		}
	}
	num("sessions", &sessions, 1, maxSessions)
	f.CPUs, f.Sessions = int(cpus), int(sessions)
	if err != nil {
		return f, err
	}
	if s := v.Get("fgpu"); s != "" && f.Template == "" {
		g, perr := strconv.ParseFloat(s, 64)
		if perr != nil || g < 0 || g > 1024 {
			return f, fmt.Errorf("fgpu: give a number of GPUs such as 0.5")
		}
		f.FGPU = g
	}
	if f.Template != "" {
		if err := f.applyTemplate(templates); err != nil {
			return f, err
		}
	}
	if f.Name != "" && !sessionName.MatchString(f.Name) {
		return f, fmt.Errorf("session name: 4 to 64 letters and digits, or empty for a generated name")
	}
	f.Apps = strings.TrimSpace(v.Get("apps"))
	if f.apps, err = parseAppsField(f.Apps); err != nil {
		return f, err
	}
	if f.Mount != "" {
		m, err := jobspec.ParseMount(f.Mount)
		if err != nil {
			return f, fmt.Errorf("folder to mount: %v", err)
		}
		f.mount = &m
	}
	return f, nil
}

// applyTemplate puts the named template's resources in the form.
func (f *launchForm) applyTemplate(templates []api.ResourceTemplate) error {
	i := slices.IndexFunc(templates, func(t api.ResourceTemplate) bool { return t.Name == f.Template })
	if i < 0 {
		names := make([]string, len(templates))
		for i, t := range templates {
			names[i] = t.Name
		}
		if len(names) == 0 {
			return fmt.Errorf("resource template %q: this cluster defines none", f.Template)
		}
		return fmt.Errorf("resource template %q does not exist (there are: %s)", f.Template, strings.Join(names, ", "))
	}
	t := templates[i]
	f.CPUs, f.MemMiB, f.ShmMiB = t.CPUs, (t.MemBytes+(1<<20)-1)>>20, (t.ShmBytes+(1<<20)-1)>>20
	f.FGPU = float64(t.FGPUHundredths) / 100
	return nil
}

// newSessionName is a generated session name, as the seed's dialog gives
// one left empty: "s" and 11 letters and digits.
func newSessionName() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("web: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	b[0] = 's'
	return string(b)
}

// spec is the job a launch submits; home is the user's home, its work
// directory. Each call names a session left unnamed anew.
func (f launchForm) spec(home string) api.JobSpec {
	s := api.JobSpec{Name: f.Name, Partition: f.Group, CPUs: f.CPUs, MemBytes: f.MemMiB << 20,
		ShmBytes: f.ShmMiB << 20, FGPUHundredths: int(f.FGPU*100 + 0.5), ContainerImage: f.Image,
		WorkDir: home, Script: interactiveScript, Apps: f.apps}
	if s.Name == "" {
		s.Name = newSessionName()
	}
	switch {
	case f.Script != "":
		s.Script = f.Script
	case f.Command != "":
		s.Script = "#!/bin/sh\n" + f.Command + "\n"
	}
	if f.mount != nil {
		s.Mounts = []api.Mount{*f.mount}
	}
	return s
}
