package stepclient

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/corral-hpc/corral/api"
)

// Bounds on reaching a step's node; variables so that a test can
// shorten them.
var (
	// LaunchRetryFor is how long a launch keeps trying a node it cannot
	// connect to. A noded restarting on a busy node is ordinary: its old
	// address refuses connections, and the controller learns the new one
	// only when the new noded registers, a moment later.
	LaunchRetryFor = 30 * time.Second
	// launchPauseFirst is the first pause between tries; it doubles up
	// to launchPauseMax.
	launchPauseFirst, launchPauseMax = 50 * time.Millisecond, time.Second
)

// Launch sends l to node's plane at node.Addr. When no connection can be
// made there (so no noded saw the launch, and trying again cannot start
// the step twice) it asks cl where the node is now and tries again, for
// up to LaunchRetryFor, and not once the controller has the node DOWN.
// A node that answers, even with a refusal, is not asked again: its
// answer is the launch's.
func Launch(ctx context.Context, cl *api.Client, node api.StepNode, caPEM string, l *api.StepLaunch) error {
	addr := node.Addr
	b := api.Backoff{First: launchPauseFirst, Max: launchPauseMax, For: LaunchRetryFor}
	return api.RetryUnconnected(ctx, b, func() error {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		return api.LaunchStep(rctx, addr, caPEM, l)
	}, func(error) (err error) {
		addr, err = currentAddr(ctx, cl, node.Node, addr)
		return err
	})
}

// currentAddr is the node plane's URL of node as the controller knows it
// now, with the scheme of was (the controller lists a host:port). A node
// the controller has DOWN is an error: no launch will reach it.
func currentAddr(ctx context.Context, cl *api.Client, node, was string) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	nodes, err := cl.Nodes(rctx)
	if err != nil {
		return "", fmt.Errorf("no connection to the node at %s, and asking the controller where it is now: %w", was, err)
	}
	for _, n := range nodes {
		switch {
		case n.Name != node:
		case n.State == api.NodeDown:
			return "", fmt.Errorf("no connection to the node at %s, which the controller has DOWN (%s)", was, n.Reason)
		case n.Addr == "":
			return was, nil
		default:
			u, err := url.Parse(was)
			if err != nil {
				return "", fmt.Errorf("node address %q is not a URL", was)
			}
			u.Host = n.Addr
			return u.String(), nil
		}
	}
	return "", fmt.Errorf("no connection to the node at %s, which the controller no longer lists", was)
}
