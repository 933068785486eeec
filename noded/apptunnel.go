package noded

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/noded/shim"
)

// App tunnels (docs/apps.md): ctld's dashboard reaches a job's web
// app through this node rather than connecting to the app's port itself.
// The node checks that the job runs here, that it published the app, and
// that whatever listens on the app's port is the job's own: jobs share
// the host's network, so two sessions on one node may publish the same
// port, and traffic meant for one user's app must never reach another's.
// Then it splices the connection to 127.0.0.1:PORT.

// appDialTimeout bounds the connect to the app's port.
const appDialTimeout = 5 * time.Second

// handleAppTunnel serves ctld's POST /v1/apps/tunnel (signed; an upgrade
// to api.AppTunnelUpgrade): 101 and the app's bytes, or one error.
func (d *Daemon) handleAppTunnel(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), api.AppTunnelUpgrade) {
		writeError(w, http.StatusBadRequest, "an app tunnel is an upgrade to "+api.AppTunnelUpgrade)
		return
	}
	var req api.AppTunnelRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	port, code, err := d.appPort(req)
	if err != nil {
		writeError(w, code, err.Error())
		return
	}
	app, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), appDialTimeout)
	if err != nil {
		writeError(w, http.StatusBadGateway, fmt.Sprintf("app %s of job %d (port %d on node %s): %v", req.App, req.JobID, port, d.cfg.Name, err))
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		app.Close()
		writeError(w, http.StatusInternalServerError, "cannot take over the connection: "+err.Error())
		return
	}
	conn.SetDeadline(time.Time{}) // the server's timeouts are for requests, not a stream
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+api.AppTunnelUpgrade+"\r\n\r\n"); err != nil {
		conn.Close()
		app.Close()
		return
	}
	splice(conn, buf.Reader, app)
}

// splice relays bytes both ways until both directions end; in is what
// the client sent after its request, read ahead.
func splice(client net.Conn, in io.Reader, app net.Conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(app, in)
		closeWrite(app)
	}()
	io.Copy(client, app)
	closeWrite(client)
	wg.Wait()
	client.Close()
	app.Close()
}

// closeWrite ends one direction, so the other side sees EOF while its
// answer still flows back.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// appPort is the port of the app req names, once the job runs here,
// published it, and alone listens on it; else an HTTP status and why.
func (d *Daemon) appPort(req api.AppTunnelRequest) (int, int, error) {
	d.mu.Lock()
	j := d.jobs[req.JobID]
	var dir string
	if j != nil && !j.cancelled && !j.ending {
		dir = j.dir
	}
	d.mu.Unlock()
	if dir == "" {
		return 0, http.StatusNotFound, fmt.Errorf("job %d does not run on node %s", req.JobID, d.cfg.Name)
	}
	sj, err := shim.ReadJob(dir)
	if err != nil {
		return 0, http.StatusServiceUnavailable, fmt.Errorf("job %d: %v", req.JobID, err)
	}
	port := 0
	for _, a := range sj.Launch.Apps {
		if a.Name == req.App {
			port = a.Port
		}
	}
	if port == 0 {
		return 0, http.StatusNotFound, fmt.Errorf("job %d publishes no app named %q", req.JobID, req.App)
	}
	switch err := d.ownsPort(sj, port); {
	case errors.Is(err, errNotListening):
		return 0, http.StatusBadGateway, fmt.Errorf("nothing listens on port %d on node %s yet: start app %s in job %d, serving under %s",
			port, d.cfg.Name, req.App, req.JobID, api.AppPath(req.JobID, req.App))
	case errors.Is(err, errForeignListener):
		return 0, http.StatusConflict, fmt.Errorf("port %d on node %s is held by a process outside job %d "+
			"(jobs share the node's network: another session here may publish the same port); "+
			"start app %s on another port, or the session on another node", port, d.cfg.Name, req.JobID, req.App)
	case err != nil:
		return 0, http.StatusServiceUnavailable, fmt.Errorf("checking who listens on port %d: %v", port, err)
	}
	return port, 0, nil
}
