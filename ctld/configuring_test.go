package ctld

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// A node that must pull a job's image first says so; the job shows
// ImagePull (queue: CF) until its script starts, the interval is kept in
// the job's history across a restart, and duplicates change nothing.
func TestConfiguringWhileTheImageIsPulled(t *testing.T) {
	tc := MustServer(t)
	node := newFakeNode(tc, "n1", 2, 4<<30)
	node.register()
	id := tc.submit(script("pulls"))
	node.waitLaunch()
	send := func(kind api.JobEventKind, at time.Time) {
		t.Helper()
		ev := api.JobEvent{JobID: id, Node: "n1", Kind: kind, Time: at, Message: "pulling image reg/fw:2.2"}
		if err := node.ctld().Do(context.Background(), http.MethodPost, "/v1/node/events", api.EventsRequest{Events: []api.JobEvent{ev}}, nil); err != nil {
			t.Fatalf("%s event: %v", kind, err)
		}
	}
	t0 := time.Now()
	send(api.EventConfiguring, t0)
	send(api.EventConfiguring, t0) // at least once delivery
	j := tc.job(id)
	if j.State != api.StateRunning || j.Reason != api.ReasonImagePull || j.DisplayState() != "CF" {
		t.Fatalf("while pulling: state %s reason %s display %s", j.State, j.Reason, j.DisplayState())
	}
	send(api.EventStarted, t0.Add(1500*time.Millisecond))
	j = tc.job(id)
	if j.Reason != api.ReasonNone || j.DisplayState() != "R" {
		t.Fatalf("after the script started: reason %s display %s", j.Reason, j.DisplayState())
	}
	tc.Restart()
	j = tc.job(id)
	var pulls, resumed int
	var pullAt, resumeAt time.Time
	for _, h := range j.History {
		switch {
		case h.State == api.StateRunning && h.Reason == api.ReasonImagePull:
			pulls, pullAt = pulls+1, h.Time
		case h.State == api.StateRunning && h.Reason == api.ReasonNone && pulls > 0:
			resumed, resumeAt = resumed+1, h.Time
		}
	}
	if pulls != 1 || resumed != 1 || resumeAt.Sub(pullAt) != 1500*time.Millisecond {
		t.Fatalf("history after restart should hold one pull of 1.5s: %+v", j.History)
	}
}
