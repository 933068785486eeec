package ctld

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/corral-hpc/corral/api"
)

// stepCancelOrder is one node's part of a step cancel, sent after the
// cancel is on disk.
type stepCancelOrder struct {
	jobID  uint64
	stepID int
	node   string
	client *api.NodeClient
	// current is the node's client now, nil once the node is down or
	// gone (nodeRegistry.liveClient, under Server.mu).
	current func(node string) *api.NodeClient
}

// Bounds on reaching a step's node with its cancel: as srun's launch
// (stepclient.Launch), a noded restarting on a busy node is ordinary: its
// old address refuses connections, and the controller learns the new one
// when the new noded registers, a moment later.
const (
	stepCancelRetryFor = 30 * time.Second
	stepCancelPauseMax = time.Second
)

// stepCancelPauseFirst is the first pause between tries; it doubles up
// to stepCancelPauseMax. A variable so that a test need not wait.
var stepCancelPauseFirst = 50 * time.Millisecond

// deliver sends the order; when no connection can be made to the node (no
// noded saw the order) it takes the node's client anew, as the controller
// knows the node now, and tries again after a pause, for up to
// stepCancelRetryFor, and not once the node is down or gone.
func (o stepCancelOrder) deliver(ctx context.Context) (*api.JobEvent, error) {
	var ev *api.JobEvent
	b := api.Backoff{First: stepCancelPauseFirst, Max: stepCancelPauseMax, For: stepCancelRetryFor}
	err := api.RetryUnconnected(ctx, b, func() (err error) {
		ev, err = o.send(ctx)
		return err
	}, func(last error) error {
		if o.client = o.current(o.node); o.client == nil {
			return fmt.Errorf("%w; the node is down now", last)
		}
		return nil
	})
	return ev, err
}

// send tells the order's node to kill the step's tasks, then asks it
// which steps it knows. It returns the node's end report to record when
// the node does not list the step (srun never launched it there, or the
// node lost it): that part will never be reported otherwise. A node that
// lists it reports its end when its tasks are gone.
func (o stepCancelOrder) send(ctx context.Context) (*api.JobEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout)
	defer cancel()
	if err := o.client.Do(ctx, http.MethodPost, stepCancelPath, api.StepCancelRequest{JobID: o.jobID, StepID: o.stepID}, nil); err != nil {
		return nil, err
	}
	var known []api.NodeStep
	if err := o.client.Do(ctx, http.MethodGet, nodeStepsPath, nil, &known); err != nil {
		return nil, fmt.Errorf("asking for its steps: %w", err)
	}
	if slices.ContainsFunc(known, func(n api.NodeStep) bool { return n.JobID == o.jobID && n.StepID == o.stepID }) {
		return nil, nil
	}
	return &api.JobEvent{JobID: o.jobID, StepID: o.stepID, Node: o.node, Kind: api.EventStepEnded,
		Time: time.Now(), Message: "not running on the node when cancelled"}, nil
}
