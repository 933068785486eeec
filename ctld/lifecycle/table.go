package lifecycle

import "github.com/corral-hpc/corral/api"

// Kind is what happened to a job.
type Kind uint8

// The events, by who reports them.
const (
	// The scheduler started the job on nodes.
	Start Kind = iota + 1
	// Its node is preparing it (pulling its image); Configured: its
	// script started after that.
	Configuring
	Configured
	// Its node reported its end, in the state it reports.
	End
	// Its node ended a run that the controller stopped at a time limit
	// lowered while it ran: the node saw a cancel, the user a TIMEOUT.
	Timeout
	// Its node ended a run that was being requeued: back to PENDING.
	EndRequeue
	// A user, or a dependency that can never be satisfied, cancelled it.
	Cancel
	// Its node was lost (not responding, set DOWN, no longer reports it):
	// the run ends NODE_FAIL, and the job ends or, with NodeFailRequeue,
	// goes back to PENDING.
	NodeFail
	NodeFailRequeue
	// A user or operator requeued it; a running job ends its run REQUEUED.
	Requeue
	// Its launch failed for the node's reasons (back to PENDING, held
	// after MaxLaunchFailures in a row) or was refused for the job's own
	// (FAILED).
	LaunchFailed
	LaunchRefused
	// A user or operator held or released it.
	Hold
	Release
	// An operator suspended (froze) a running job, or resumed it.
	Suspend
	Resume

	numKinds // one past the last
)

var kindNames = [numKinds]string{Start: "start", Configuring: "configuring", Configured: "configured",
	End: "end", Timeout: "timeout", EndRequeue: "end (requeue)", Cancel: "cancel",
	NodeFail: "node failure", NodeFailRequeue: "node failure (requeue)", Requeue: "requeue",
	LaunchFailed: "launch failure", LaunchRefused: "launch refusal", Hold: "hold", Release: "release", Suspend: "suspend", Resume: "resume"}

func (k Kind) String() string {
	if k > 0 && k < numKinds {
		return kindNames[k]
	}
	return "unknown event"
}

// Kinds lists every event, for tests that go through them all.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := Start; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Requeues says whether the event puts a run's job back to PENDING to run
// again: the record's per-run flags go with the run.
func (k Kind) Requeues() bool { return k == Requeue || k == EndRequeue || k == NodeFailRequeue }

// nodeEndStates are the states a node may report a job ending in.
var nodeEndStates = []api.JobState{api.StateCompleted, api.StateFailed, api.StateCancelled,
	api.StateTimeout, api.StateOutOfMemory, api.StateNodeFail}

var pending = []api.JobState{api.StatePending}

// table is every allowed (state, event) and the states it may lead to
// (End: whichever the node reports). A finished job can only be requeued.
var table = map[api.JobState]map[Kind][]api.JobState{
	api.StatePending: {
		Start:   {api.StateRunning},
		Cancel:  {api.StateCancelled},
		Hold:    pending,
		Release: pending,
	},
	api.StateRunning: {
		Configuring:     {api.StateRunning},
		Configured:      {api.StateRunning},
		End:             nodeEndStates,
		Timeout:         {api.StateTimeout},
		EndRequeue:      pending,
		Cancel:          {api.StateCancelled},
		NodeFail:        {api.StateNodeFail},
		NodeFailRequeue: pending,
		Requeue:         pending,
		LaunchFailed:    pending,
		LaunchRefused:   {api.StateFailed},
		Suspend:         {api.StateSuspended},
		// As Slurm: a running job's hold matters once it is requeued.
		Hold:    {api.StateRunning},
		Release: {api.StateRunning},
	},
	// A suspended job still holds its nodes: it ends as a running one
	// does (a cancel thaws it first), but cannot start over or time out.
	api.StateSuspended: {
		Resume:          {api.StateRunning},
		End:             nodeEndStates,
		EndRequeue:      pending,
		Cancel:          {api.StateCancelled},
		NodeFail:        {api.StateNodeFail},
		NodeFailRequeue: pending,
		Requeue:         pending,
		Hold:            {api.StateSuspended},
		Release:         {api.StateSuspended},
	},
	api.StateCompleted:   {Requeue: pending},
	api.StateFailed:      {Requeue: pending},
	api.StateCancelled:   {Requeue: pending},
	api.StateTimeout:     {Requeue: pending},
	api.StateOutOfMemory: {Requeue: pending},
	api.StateNodeFail:    {Requeue: pending},
}

// Allowed lists the states event k may lead to from state st; none when
// it is refused there.
func Allowed(st api.JobState, k Kind) []api.JobState { return table[st][k] }
