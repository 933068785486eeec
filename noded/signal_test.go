package noded

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/container/containertest"
	"github.com/corral-hpc/corral/noded/nodedtest"
)

// trapScript traps USR1, USR2 and HUP in the batch shell and HUP in a
// child it starts; both wait on background sleeps, so a trap runs at once.
const trapScript = `#!/bin/bash
trap 'echo script got USR1' USR1
trap 'echo script got USR2' USR2
trap 'echo script got HUP' HUP
bash -c 'trap "echo child got HUP" HUP; echo child ready; while :; do sleep 0.1 & wait $!; done' &
while :; do sleep 0.1 & wait $!; done
`

// POST /v1/jobs/signal delivers a signal to the processes of its scope in
// a real job, which keeps running: steps (this job has none) reach no
// one, batch the shell alone, full the shell and its child. A job or step
// the node does not run, or a bad signal or scope, is refused.
func TestJobSignalDelivery(t *testing.T) {
	ctld := nodedtest.NewFakeCtld(t, testKey)
	n := mustNode(t, ctld, "")
	req := n.launchReq(trapScript)
	req.Output = "sig.out"
	n.launch(t, req)
	ctld.Started(req.JobID)
	out := filepath.Join(n.work, "sig.out")
	has := func(want string) bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), want)
	}
	waitOutput := func(want string) {
		t.Helper()
		if !containertest.Eventually(20*time.Second, func() bool { return has(want) }) {
			b, _ := os.ReadFile(out)
			t.Fatalf("no %q in the job's output:\n%s", want, b)
		}
	}
	send := func(r api.NodeSignalRequest) int {
		t.Helper()
		err := n.client.Do(context.Background(), http.MethodPost, "/v1/jobs/signal", r, nil)
		var se *api.StatusError
		switch {
		case err == nil:
			return http.StatusOK
		case errors.As(err, &se):
			return se.Code
		}
		t.Fatal(err)
		return 0
	}
	waitOutput("child ready")
	id := req.JobID
	for _, r := range []api.NodeSignalRequest{
		{JobID: id, Signal: 10, Scope: api.SignalSteps},
		{JobID: id, Signal: 12, Scope: api.SignalBatch},
	} {
		if code := send(r); code != http.StatusOK {
			t.Fatalf("%+v: %d", r, code)
		}
	}
	waitOutput("script got USR2")
	if code := send(api.NodeSignalRequest{JobID: id, Signal: 1, Scope: api.SignalFull}); code != http.StatusOK {
		t.Fatalf("full: %d", code)
	}
	waitOutput("child got HUP")
	waitOutput("script got HUP")
	if has("USR1") { // sent before USR2: had the shell got it, its trap would have run first
		t.Error("the steps' signal reached the batch shell")
	}
	three := 3
	for _, c := range []struct {
		r    api.NodeSignalRequest
		want int
	}{
		{api.NodeSignalRequest{JobID: 999999, Signal: 10, Scope: api.SignalSteps}, http.StatusNotFound},
		{api.NodeSignalRequest{JobID: id, Signal: 10, Scope: api.SignalSteps, Step: &three}, http.StatusNotFound},
		{api.NodeSignalRequest{JobID: id, Signal: 10, Scope: "all"}, http.StatusBadRequest},
		{api.NodeSignalRequest{JobID: id, Signal: 0, Scope: api.SignalBatch}, http.StatusBadRequest},
		{api.NodeSignalRequest{JobID: id, Signal: 10, Scope: api.SignalBatch, Step: &three}, http.StatusBadRequest},
	} {
		if code := send(c.r); code != c.want {
			t.Errorf("%+v: %d, want %d", c.r, code, c.want)
		}
	}
	if ids := n.jobs(t); len(ids) != 1 || ids[0] != id {
		t.Fatalf("after the signals the node runs %v, want job %d", ids, id)
	}
	if err := n.client.Do(context.Background(), http.MethodPost, "/v1/signal", api.SignalRequest{JobID: id}, nil); err != nil {
		t.Fatal(err)
	}
	if ev := ctld.Ended(id); ev.State != api.StateCancelled {
		t.Errorf("ended %+v, want CANCELLED", ev)
	}
	mustNoJobDirs(t, n)
}
