package ctld

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/ctld/store"
	"github.com/corral-hpc/corral/hostlist"
)

// Administrators take nodes out of service in two strengths:
//
//   - drain: the planner stops placing jobs on the node (it is not Up in
//     the snapshot) and its running jobs finish;
//   - down: the node is declared dead. Its running jobs end NODE_FAIL (or
//     are requeued) at once and may start elsewhere at once, since the
//     old runs count as gone (nodeRegistry.oldRunMayLive); the node stays DOWN
//     whatever it reports, and is told to kill whatever it still runs.
//
// Both are kept in the node's record (reason, since, down), so they
// survive controller restarts and node re-registrations, until a resume.

// maxDrainReason bounds a drain's reason, which every `corral nodes` shows.
const maxDrainReason = 256

// nodeOp is one of the three administrative changes.
type nodeOp string

const (
	opDrain  nodeOp = "drain"
	opDown   nodeOp = "down"
	opResume nodeOp = "resume"
)

// changeNodes applies op to the named nodes, all or none: an unknown node
// or a bad reason refuses the whole request. It returns the nodes whose
// state changed (a node already so is not an error).
func (s *Server) changeNodes(op nodeOp, exprs []string, reason string, caller peer) (api.NodesResponse, error) {
	if !s.gate.IsAdmin(caller.caller()) {
		return api.NodesResponse{}, fault.Errorf(fault.Forbidden, "%s: only administrators may change nodes", op)
	}
	switch {
	case op == opResume:
		reason = ""
	case reason == "":
		return api.NodesResponse{}, fault.Errorf(fault.Invalid, "%s: a reason is required (it is shown with the node)", op)
	case len(reason) > maxDrainReason || strings.ContainsAny(reason, "\n\r\x00"):
		return api.NodesResponse{}, fault.Errorf(fault.Invalid, "%s: the reason must be one line of at most %d bytes", op, maxDrainReason)
	}
	var names []string
	for _, e := range exprs {
		if err := tooManyRefs(string(op), len(names)+1, "nodes"); err != nil {
			return api.NodesResponse{}, err
		}
		ns, err := hostlist.ExpandMax(e, api.MaxRefsPerRequest-len(names))
		if err != nil {
			return api.NodesResponse{}, fault.Errorf(fault.Invalid, "%s: %v", op, err)
		}
		names = append(names, ns...)
	}
	hostlist.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return api.NodesResponse{}, fault.Errorf(fault.Invalid, "%s: name at least one node", op)
	}

	now := time.Now()
	s.mu.Lock()
	if unknown := s.nodes.unknown(names); len(unknown) > 0 {
		s.mu.Unlock()
		return api.NodesResponse{}, fault.Errorf(fault.NotFound, "%s: no node %s (nothing changed)", op, strings.Join(unknown, ", "))
	}
	recs := s.nodes.withDrain(names, reason, op == opDown, now)
	resp := api.NodesResponse{Nodes: []string{}}
	for _, rec := range recs {
		resp.Nodes = append(resp.Nodes, rec.Name)
	}
	if len(recs) > 0 {
		if err := s.store.PutNodes(recs...); err != nil { // one commit for all
			s.mu.Unlock()
			return api.NodesResponse{}, fmt.Errorf("%s: %w", op, err)
		}
	}
	gone := s.nodes.setDrain(recs)
	lost := s.lostOnLocked(gone, now, func(name string) string { return downedMessage(s.nodes.get(name)) })
	parts := stepUpdates{recs: s.q.lostStepParts(gone, now)}
	err := s.q.commit(lost, nil, parts.recs...)
	s.q.partsGoneOn(gone)
	s.mu.Unlock()
	parts.logEnds(s.log)
	if len(resp.Nodes) > 0 {
		s.log.Printf("%s nodes %s by uid %d%s", op, strings.Join(resp.Nodes, ","), caller.UID, suffixIf(": "+reason, reason != ""))
		s.Kick() // a resumed node, or requeued jobs, may start now
	}
	for _, c := range lost {
		_, next := c.jobs()
		s.log.Printf("end job %d %s: its node was set DOWN", next.ID, next.State)
	}
	if err != nil {
		return resp, fmt.Errorf("%s: the nodes changed, but ending their jobs failed: %w", op, err)
	}
	return resp, nil
}

// unknown lists the names no node has.
func (r *nodeRegistry) unknown(names []string) []string {
	var out []string
	for _, name := range names {
		if r.get(name) == nil {
			out = append(out, name)
		}
	}
	return out
}

// withDrain is the records of the named (known) nodes that a drain
// (reason set, down false), a down (down true) or a resume (reason empty)
// changes, in the order of names; nodes already so are left out. Nothing
// changes until setDrain, once the records are on disk.
func (r *nodeRegistry) withDrain(names []string, reason string, down bool, now time.Time) []store.NodeRecord {
	var recs []store.NodeRecord
	for _, name := range names {
		n := r.get(name)
		rec := n.rec
		rec.Drain, rec.Down = reason, down
		switch {
		case reason == "":
			rec.DrainedSince = time.Time{}
		case n.rec.Drain == "":
			rec.DrainedSince = now
		} // a new reason or a stronger state keeps the time it began
		if rec.Drain == n.rec.Drain && rec.Down == n.rec.Down {
			continue // already so
		}
		recs = append(recs, rec)
	}
	return recs
}

// setDrain installs records from withDrain and returns the nodes they
// set DOWN, whose runs are gone.
func (r *nodeRegistry) setDrain(recs []store.NodeRecord) (downed map[string]bool) {
	downed = map[string]bool{}
	for _, rec := range recs {
		n := r.get(rec.Name)
		wasDown := n.rec.Down
		n.rec = rec
		switch {
		case rec.Down:
			n.up = false
			downed[rec.Name] = true
		case wasDown: // resumed: up again at its next registration
			n.reason = "resumed; waiting for the node to register"
		}
	}
	return downed
}

// downedMessage is the end message of a run on a node set DOWN.
func downedMessage(n *node) string {
	return "node " + n.rec.Name + " was set DOWN by an administrator: " + n.rec.Drain
}
