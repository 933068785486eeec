package ctld

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// postMultipart sends a form with an uploaded file, as the launch
// dialog's browser does.
func (b *browser) postMultipart(path string, form url.Values, file, content string) (int, string) {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range form {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	if file != "" {
		fw, err := mw.CreateFormFile("script", file)
		if err != nil {
			b.t.Fatal(err)
		}
		fw.Write([]byte(content))
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// The launch dialog offers corral.conf's resource templates with the
// hook data-template; launching with one gives the job exactly the
// template's resources whatever the sliders said, and shows them in the
// equivalent command; an unknown template is refused and starts nothing.
// An uploaded script makes the session a batch job running that script;
// an unnamed session gets a generated name that follows the seed's rule.
func TestDashboardLaunchTemplatesAndScripts(t *testing.T) {
	conf := matrixConf + "ResourceTemplate=small CPUs=2 Mem=512M SharedMem=128M\nResourceTemplate=big CPUs=4 Mem=2G\n"
	tc := MustServer(t, withPartitions(conf), func(c *Config) { c.WebListen = "127.0.0.1:0" })
	base := "http://" + tc.srv.web.Addr()
	b := newBrowser(t, base)
	signIn(t, tc, b, uidOwner)
	code, page := b.get("/launch?template=small")
	if code != 200 || !strings.Contains(page, `data-template="small" data-cpus="2" data-mem-mib="512" data-shm-mib="128"`) ||
		!strings.Contains(page, `data-template="big"`) || !strings.Contains(page, "-c 2 --mem 512M --shm 128M") ||
		!strings.Contains(page, "# resource template small") {
		t.Fatalf("the dialog with template small chosen (%d) lacks its choices or its command:\n%s", code, page)
	}
	owned := func() []api.Job {
		jobs, err := tc.client.Jobs(context.Background(), api.JobFilter{Users: []string{"sys"}})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	form := url.Values{"csrf": {csrfRE(page)}, "cpus": {"1"}, "mem_mib": {"64"}, "sessions": {"1"}, "group": {"batch"}}

	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("template", "huge")
	if code, out := b.post("/launch", bad, base); code != http.StatusBadRequest || !strings.Contains(out, `resource template &#34;huge&#34; does not exist (there are: small, big)`) {
		t.Errorf("an unknown template: %d, want 400 naming the templates:\n%s", code, out)
	}
	if n := len(owned()); n != 0 {
		t.Fatalf("a refused launch started %d sessions", n)
	}

	form.Set("template", "small")
	if code, out := b.post("/launch", form, base); code != http.StatusSeeOther {
		t.Fatalf("launch with template small: %d\n%s", code, out)
	}
	jobs := owned()
	if len(jobs) != 1 {
		t.Fatalf("%d sessions, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Spec.CPUs != 2 || j.Spec.MemBytes != 512<<20 || j.Spec.ShmBytes != 128<<20 {
		t.Errorf("job %d from template small: %d CPUs, mem %d, shm %d; want 2, 512 MiB, 128 MiB", j.ID, j.Spec.CPUs, j.Spec.MemBytes, j.Spec.ShmBytes)
	}
	if !sessionNameRule(j.Name) {
		t.Errorf("an unnamed session is called %q, not 4 to 64 letters and digits", j.Name)
	}

	script := "#!/bin/sh\necho from the uploaded script\n"
	form.Del("template")
	form.Set("name", "upload01")
	if code, out := b.postMultipart("/launch", form, "train.sh", script); code != http.StatusSeeOther {
		t.Fatalf("launch with a script: %d\n%s", code, out)
	}
	var up *api.Job
	for _, j := range owned() {
		if j.Name == "upload01" {
			up = &j
		}
	}
	if up == nil || up.Spec.Script != script || up.Spec.CPUs != 1 || up.Spec.MemBytes != 64<<20 {
		t.Fatalf("the uploaded script's job: %+v", up)
	}
	for _, c := range []struct{ file, content, want string }{
		{"x.sh", "echo no interpreter\n", "the first line must start with #!"},
		{"x.sh", "#!/bin/sh\r\necho dos\r\n", "DOS line breaks"},
		{"x.sh", "#!/bin/sh\n" + strings.Repeat("#", api.MaxScriptBytes), "larger than"},
	} {
		if code, out := b.postMultipart("/launch", form, c.file, c.content); code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge || !strings.Contains(out, c.want) {
			t.Errorf("upload %.20q: %d, want a refusal saying %q:\n%.400s", c.content, code, c.want, out)
		}
	}
	if n := len(owned()); n != 2 {
		t.Errorf("refused uploads left %d sessions, want 2", n)
	}
}

func sessionNameRule(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
