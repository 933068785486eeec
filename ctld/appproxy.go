package ctld

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/fault"
	"github.com/corral-hpc/corral/web"
)

// appProxy opens jobs' web apps for the dashboard (web.Apps): it decides
// who may reach which app, and dials it through the node that runs the
// job (noded's app tunnel over the node plane), never the app's port
// directly: the node checks the job runs there and holds the port.
type appProxy struct{ s *Server }

var _ web.Apps = appProxy{}

// OpenApp is job id's app name for uid: its owner's, and operators' and
// admins', as cancelling it is (the API's rule for acting on a job).
func (a appProxy) OpenApp(_ context.Context, uid uint32, id uint64, name string) (web.AppTarget, error) {
	t, err := a.open(uid, id, name)
	if err != nil {
		return web.AppTarget{}, asStatus(err)
	}
	return t, nil
}

func (a appProxy) open(uid uint32, id uint64, name string) (web.AppTarget, error) {
	s := a.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	j := s.q.job(id)
	if j == nil {
		return web.AppTarget{}, fault.Errorf(fault.NotFound, "job %d does not exist", id)
	}
	rec := &j.rec.Job
	if !s.gate.MayAct(authz.Caller{UID: uid}, rec.UID) {
		return web.AppTarget{}, fault.Errorf(fault.Forbidden, "job %d belongs to %s: only its owner or an operator may open its apps", id, rec.User)
	}
	port := 0
	var names []string
	for _, app := range rec.Spec.Apps {
		names = append(names, app.Name)
		if app.Name == name {
			port = app.Port
		}
	}
	if port == 0 {
		published := "none"
		if len(names) > 0 {
			published = strings.Join(names, ", ")
		}
		return web.AppTarget{}, fault.Errorf(fault.NotFound, "job %d publishes no app named %q (its apps: %s)", id, name, published)
	}
	if st := j.state(); st != api.StateRunning {
		return web.AppTarget{}, fault.Errorf(fault.Conflict, "job %d is %s, not running: its apps are served only while it runs", id, st)
	}
	host := j.batchHost()
	if j.launch.inFlight > 0 {
		// RUNNING from the moment the launch is sent; until the node
		// answers, it does not know the job and would refuse the app.
		return web.AppTarget{}, fault.Errorf(fault.Unavailable, "job %d is starting on node %s: its apps are served once it runs there; try again in a moment", id, host)
	}
	client := s.nodes.client(host)
	if client == nil {
		return web.AppTarget{}, fault.Errorf(fault.Unavailable, "job %d runs on node %s, which is not known now", id, host)
	}
	req := api.AppTunnelRequest{JobID: id, App: name}
	return web.AppTarget{Node: host, Port: port, Dial: func(ctx context.Context) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, nodeCallTimeout) // the tunnel's set-up; the stream has no deadline
		defer cancel()
		return client.DialApp(ctx, req)
	}}, nil
}

// asStatus is a domain error as the HTTP answer the dashboard shows.
func asStatus(err error) error {
	var a *answered
	if errors.As(err, &a) {
		return &api.StatusError{Code: a.code, Message: a.msg}
	}
	code := httpStatus[fault.Internal]
	if k := fault.KindOf(err); int(k) < len(httpStatus) {
		code = httpStatus[k]
	}
	return &api.StatusError{Code: code, Message: err.Error()}
}
