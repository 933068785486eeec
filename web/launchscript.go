package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/api"
)

// A launch may carry a batch script, uploaded with the dialog
// (multipart/form-data, field "script"): the session is then a batch job
// running that script. Its #SBATCH lines are not read: the dialog's
// fields are the job's options, as the equivalent command's are.

// maxLaunchBody bounds a launch request: a script as large as the
// controller takes, and the dialog's other fields.
const maxLaunchBody = api.MaxScriptBytes + 64<<10

// launchBody bounds and reads a launch request's body before its CSRF
// token is checked, so an upload too large gets its own message and
// never reaches memory or disk past the bound.
func (d *Dashboard) launchBody(h signedInHandler) signedInHandler {
	return func(w http.ResponseWriter, r *http.Request, sess *session, tok string) {
		r.Body = http.MaxBytesReader(w, r.Body, maxLaunchBody)
		var err error
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			err = r.ParseMultipartForm(maxLaunchBody) // held in memory: the bound is small
		} else {
			err = r.ParseForm()
		}
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			d.problem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Refused: the launch is larger than %d KiB; a script may be at most %d KiB.", maxLaunchBody>>10, api.MaxScriptBytes>>10))
			return
		case err != nil:
			d.problem(w, http.StatusBadRequest, "Refused: the launch form could not be read: "+err.Error())
			return
		}
		h(w, r, sess, tok)
	}
}

// readScript takes the uploaded script, if any. A script and a command
// together are refused: which one would run?
func (f *launchForm) readScript(r *http.Request) error {
	if r.MultipartForm == nil || len(r.MultipartForm.File["script"]) == 0 {
		return nil
	}
	fh := r.MultipartForm.File["script"][0]
	if fh.Size == 0 && fh.Filename == "" { // the file input left empty
		return nil
	}
	file, err := fh.Open()
	if err != nil {
		return fmt.Errorf("script: %v", err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, api.MaxScriptBytes+1))
	if err != nil {
		return fmt.Errorf("script: %v", err)
	}
	name := scriptFileName(fh.Filename)
	if err := api.ValidateScript("script "+name, string(b)); err != nil {
		return err
	}
	if !strings.HasPrefix(string(b), "#!") {
		return fmt.Errorf("script %s: the first line must start with #! and an interpreter, such as #!/bin/bash", name)
	}
	if f.Command != "" {
		return errors.New("give a command or a script, not both")
	}
	f.Script, f.ScriptName = string(b), name
	return nil
}

// plainName is a file name a shell needs no quotes for.
var plainName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// scriptFileName is an uploaded script's base name for the equivalent
// command, or "script.sh" when the browser's name is not a plain one.
func scriptFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	if !plainName.MatchString(name) || strings.HasPrefix(name, "-") || name == "." || name == ".." {
		return "script.sh"
	}
	return name
}

// Equivalent is the `corral submit` that launches one of the sessions:
// a template shows as the resources it sets, and is named in a comment.
func (f launchForm) Equivalent() string {
	args := []string{"corral submit"}
	add := func(a ...string) { args = append(args, a...) }
	if f.Group != "" {
		add("-p", f.Group)
	}
	if f.Name != "" {
		add("-J", f.Name)
	}
	add("-c", strconv.Itoa(f.CPUs), "--mem", fmt.Sprintf("%dM", f.MemMiB))
	if f.ShmMiB > 0 {
		add("--shm", fmt.Sprintf("%dM", f.ShmMiB))
	}
	if f.FGPU > 0 {
		add("--fgpu", strconv.FormatFloat(f.FGPU, 'f', -1, 64))
	}
	if f.Image != "" {
		add("--container-image", f.Image)
	}
	if f.Mount != "" {
		add("--mount", shellQuote(f.Mount))
	}
	for _, a := range f.apps {
		add("--app", fmt.Sprintf("%s=%d", a.Name, a.Port))
	}
	switch {
	case f.ScriptName != "":
		add(f.ScriptName)
	case f.Command != "":
		add("--wrap", shellQuote(f.Command))
	default:
		add("--wrap", shellQuote("while :; do sleep 3600; done"))
	}
	if f.Template != "" {
		add("# resource template " + f.Template)
	}
	return strings.Join(args, " ")
}

// shellQuote is s in single quotes, as a POSIX shell reads it back.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
