package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// App is a web app a job publishes (corral submit --app NAME=PORT): the
// dashboard proxies /apps/<job>/<name>/ to Port on the job's node, which
// the job's own processes listen on (jobs share the host's network).
type App struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

// Bounds of an app's name and port. Ports below 1024 are the host's
// services', never a user's.
const (
	MaxApps     = 16
	MinAppPort  = 1024
	MaxAppPort  = 65535
	maxAppName  = 32
	AppsPrefix  = "/apps/"
	AppsLabel   = "corral.apps" // an image label declaring its apps: "jupyter:8888,tensorboard:6006"
	appEnvStart = "CORRAL_APP_"
)

// validAppName is ^[a-z0-9-]{1,32}$ by hand: a regexp compiled at init
// was most of package api's start-up in every command (sbatch included),
// which seldom checks an app.
func validAppName(s string) bool {
	if len(s) < 1 || len(s) > maxAppName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// CheckApp says what is wrong with a, or nil.
func CheckApp(a App) error {
	if !validAppName(a.Name) {
		return fmt.Errorf("app name %q: 1 to %d of a-z, 0-9 and -", a.Name, maxAppName)
	}
	if a.Port < MinAppPort || a.Port > MaxAppPort {
		return fmt.Errorf("app %s: port %d is not in %d-%d", a.Name, a.Port, MinAppPort, MaxAppPort)
	}
	return nil
}

// ParseApp reads NAME=PORT (--app) or NAME:PORT (an image label's entry).
func ParseApp(s string) (App, error) {
	name, port, ok := strings.Cut(s, "=")
	if !ok {
		name, port, ok = strings.Cut(s, ":")
	}
	if !ok {
		return App{}, fmt.Errorf("app %q: give NAME=PORT, such as jupyter=8888", s)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return App{}, fmt.Errorf("app %q: port %q is not a number", s, port)
	}
	a := App{Name: name, Port: n}
	return a, CheckApp(a)
}

// ParseAppsLabel reads an image's AppsLabel value: NAME:PORT entries
// separated by commas.
func ParseAppsLabel(v string) ([]App, error) {
	var out []App
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		a, err := ParseApp(f)
		if err != nil {
			return nil, fmt.Errorf("label %s: %v", AppsLabel, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// AppPath is where the dashboard serves job id's app name: the base path
// the app must serve under (Jupyter's --NotebookApp.base_url).
func AppPath(id uint64, name string) string {
	return AppsPrefix + strconv.FormatUint(id, 10) + "/" + name + "/"
}

// AppEnv is the variables that tell a job's processes where its apps are
// served: CORRAL_APP_<NAME>_URL (AppPath) and CORRAL_APP_<NAME>_PORT,
// NAME upper-cased with - as _.
func AppEnv(id uint64, apps []App) [][2]string {
	var out [][2]string
	for _, a := range apps {
		v := appEnvStart + strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_"))
		out = append(out, [2]string{v + "_URL", AppPath(id, a.Name)}, [2]string{v + "_PORT", strconv.Itoa(a.Port)})
	}
	return out
}

// AppTunnelPath is the node plane's tunnel to a job's app: a signed POST
// of an AppTunnelRequest asking to upgrade the connection. The node
// answers 101 and from then on relays bytes between the connection and
// the app's port; a refusal is an ordinary JSON error.
const (
	AppTunnelPath    = "/v1/apps/tunnel"
	AppTunnelUpgrade = "corral-app"
)

// AppTunnelRequest names the app to reach: the node looks its port up in
// the job's launch.
type AppTunnelRequest struct {
	JobID uint64 `json:"job_id"`
	App   string `json:"app"`
}

// DialApp opens a tunnel to job req.JobID's app req.App on the node c
// reaches: a byte stream to the app's port, over the node plane's
// connection (TLS when c's base URL is https). The node's refusal is a
// *StatusError.
func (c *NodeClient) DialApp(ctx context.Context, req AppTunnelRequest) (net.Conn, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("reaching node %s: %w", u.Host, err)
	}
	if u.Scheme == "https" {
		conf := c.tls.Clone()
		if conf == nil {
			conf = &tls.Config{MinVersion: tls.VersionTLS13}
		}
		if conf.ServerName == "" {
			conf.ServerName = u.Hostname()
		}
		tc := tls.Client(conn, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("reaching node %s: %w", u.Host, err)
		}
		conn = tc
	}
	ok := false
	defer func() {
		if !ok {
			conn.Close()
		}
	}()
	if dl, has := ctx.Deadline(); has { // the handshake only: the stream has no deadline
		conn.SetDeadline(dl)
	}
	body, _ := json.Marshal(req) // plain data: cannot fail
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+AppTunnelPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Connection", "Upgrade")
	hr.Header.Set("Upgrade", AppTunnelUpgrade)
	Sign(hr, c.Key, body, time.Now())
	if err := hr.Write(conn); err != nil {
		return nil, fmt.Errorf("node %s: %w", u.Host, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, hr)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", u.Host, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e Error
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, &StatusError{Code: resp.StatusCode, Message: e.Error, Kind: e.Kind}
		}
		return nil, &StatusError{Code: resp.StatusCode, Message: fmt.Sprintf("node %s: %s", u.Host, resp.Status)}
	}
	conn.SetDeadline(time.Time{})
	ok = true
	return &bufferedConn{Conn: conn, r: br}, nil
}

// bufferedConn is a connection whose first bytes were read ahead into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
