package ctld

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/corral-hpc/corral/api"
)

// Who may open a session's app is who may act on the job: its owner,
// operators and admins; another user is refused before anything is
// dialled. An unknown job or app is 404, a job not running 409, one whose
// launch the node has not answered 503; once it runs, the app is on its
// batch node at the port it published, which the launch carried to the
// node.
func TestAppProxyOpen(t *testing.T) {
	tc := MustServer(t, withPartitions(matrixConf))
	spec := script("nb")
	spec.Apps = []api.App{{Name: "nb", Port: 8888}}
	id := tc.submitFor(uidOwner, spec)
	apps := appProxy{tc.srv}
	status := func(uid uint32, job uint64, name string) int {
		t.Helper()
		_, err := apps.OpenApp(context.Background(), uid, job, name)
		if err == nil {
			return http.StatusOK
		}
		var se *api.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("OpenApp(%d, %d, %s): %v is not a status", uid, job, name, err)
		}
		return se.Code
	}
	for _, tt := range []struct {
		who  string
		uid  uint32
		job  uint64
		name string
		want int
	}{
		{"another user", nobody, id, "nb", http.StatusForbidden},
		{"an unknown job", uidOwner, id + 100, "nb", http.StatusNotFound},
		{"an unpublished app", uidOwner, id, "other", http.StatusNotFound},
		{"the owner, pending", uidOwner, id, "nb", http.StatusConflict},
		{"an operator, pending", uidOperator, id, "nb", http.StatusConflict},
		{"an admin, pending", uidAdmin, id, "nb", http.StatusConflict},
	} {
		if got := status(tt.uid, tt.job, tt.name); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.who, got, tt.want)
		}
	}

	// RUNNING while the launch is unanswered: the node does not know the
	// job yet, so its app is not served (503), not refused as unknown.
	n := newFakeNode(tc, "n1", 2, 1<<30)
	hold := make(chan struct{})
	n.mu.Lock()
	n.holdLaunch = hold
	n.mu.Unlock()
	n.register()
	tc.waitJob(id, "running", inState(api.StateRunning))
	if got := status(uidOwner, id, "nb"); got != http.StatusServiceUnavailable {
		t.Errorf("the owner, launch unanswered: %d, want 503", got)
	}
	close(hold)
	if l := n.waitLaunch(); !reflect.DeepEqual(l.Apps, spec.Apps) {
		t.Errorf("the launch carries apps %+v, want %+v", l.Apps, spec.Apps)
	}
	tc.waitAcked(id)
	for _, uid := range []uint32{uidOwner, uidOperator, uidAdmin} {
		got, err := apps.OpenApp(context.Background(), uid, id, "nb")
		if err != nil || got.Node != "n1" || got.Port != 8888 || got.Dial == nil {
			t.Errorf("uid %d, running: %+v, %v; want node n1 port 8888", uid, got, err)
		}
	}
	if got := status(nobody, id, "nb"); got != http.StatusForbidden {
		t.Errorf("another user, running: %d, want 403", got)
	}
}
