package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultSocket is where ctld listens for users unless told otherwise.
const DefaultSocket = "/run/corral/ctld.sock"

// SocketEnv names the environment variable that overrides DefaultSocket.
const SocketEnv = "CORRAL_SOCKET"

// ResolveSocket picks the socket: explicit flag, then $CORRAL_SOCKET, then
// the default.
func ResolveSocket(flag string) string {
	if flag != "" {
		return flag
	}
	if s := os.Getenv(SocketEnv); s != "" {
		return s
	}
	return DefaultSocket
}

// StatusError is a non-2xx answer from a corral daemon.
type StatusError struct {
	Code    int
	Message string
	Kind    ErrorKind // the answer's kind, if any (node.go)
}

func (e *StatusError) Error() string { return e.Message }

// ErrUnreachable wraps failures to reach the controller at all.
var ErrUnreachable = errors.New("cannot reach the corral controller")

// Client is the user-plane client: HTTP/JSON over ctld's Unix socket.
type Client struct {
	Socket string
	http   *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 64,
	}
	return &Client{Socket: socket, http: &http.Client{Transport: tr}}
}

// NewClientTransport returns a client whose requests go through rt; name
// stands for the socket in its messages. The controller's dashboard uses
// one that serves its users' requests in process.
func NewClientTransport(name string, rt http.RoundTripper) *Client {
	return &Client{Socket: name, http: &http.Client{Transport: rt}}
}

// Do sends a JSON request and decodes a JSON answer into out (if non-nil).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return doJSON(ctx, c.http, "http://corral"+path, method, in, out, nil, func(err error) error {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("%w at %s (is corral-ctld running? set --socket or %s)", ErrUnreachable, c.Socket, SocketEnv)
		}
		if errors.Is(err, syscall.EACCES) {
			return fmt.Errorf("%w at %s: permission denied", ErrUnreachable, c.Socket)
		}
		return fmt.Errorf("%w at %s: %v", ErrUnreachable, c.Socket, err)
	})
}

// Submit stores a job durably and returns its ID.
func (c *Client) Submit(ctx context.Context, req SubmitRequest) (uint64, error) {
	var resp SubmitResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs", req, &resp)
	return resp.JobID, err
}

// Jobs lists jobs matching f.
func (c *Client) Jobs(ctx context.Context, f JobFilter) ([]Job, error) {
	path := JobsPath(f, "")
	var jobs []Job
	err := c.Do(ctx, http.MethodGet, path, nil, &jobs)
	return jobs, err
}

// JobPage lists the newest limit jobs of each state matching f, with
// every state's count (JobPage).
func (c *Client) JobPage(ctx context.Context, f JobFilter, limit int) (*JobPage, error) {
	path := JobsPath(f, "")
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var page JobPage
	if err := c.Do(ctx, http.MethodGet, path+sep+"limit="+strconv.Itoa(limit), nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// JobsPath is GET /v1/jobs for f, asking for view ("", "brief",
// "summary" or "full"; docs/api.md).
func JobsPath(f JobFilter, view string) string {
	q := url.Values{}
	if view != "" {
		q.Set("view", view)
	}
	for _, u := range f.Users {
		q.Add("user", u)
	}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	for _, id := range f.IDs {
		q.Add("id", strconv.FormatUint(id, 10))
	}
	for _, t := range f.Tasks {
		q.Add("id", t.String())
	}
	if f.All {
		q.Set("all", "1")
	}
	if f.WithSteps {
		q.Set("steps", "1")
	}
	if f.Completing {
		q.Set("completing", "1")
	}
	if !f.EndedSince.IsZero() {
		q.Set("ended_since", f.EndedSince.UTC().Format(time.RFC3339Nano))
	}
	if len(q) == 0 {
		return "/v1/jobs"
	}
	return "/v1/jobs?" + q.Encode()
}

// Job fetches one job, finished or not.
func (c *Client) Job(ctx context.Context, id uint64) (*Job, error) {
	var j Job
	if err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+strconv.FormatUint(id, 10), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Cancel cancels jobs by ID and/or filter, at most MaxRefsPerRequest IDs
// a request (batch.go). A batch that fails ends it: the jobs of the
// batches before it are cancelled.
func (c *Client) Cancel(ctx context.Context, req CancelRequest) (*CancelResponse, error) {
	resp := CancelResponse{Cancelled: []uint64{}}
	for _, b := range refBatches(req.IDs, req.Tasks) {
		one := req
		one.IDs, one.Tasks = b.IDs, b.Tasks
		var part CancelResponse
		if err := c.Do(ctx, http.MethodPost, "/v1/jobs/cancel", one, &part); err != nil {
			return nil, err
		}
		resp.add(&part)
	}
	return &resp, nil
}

// Nodes lists the cluster's nodes.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	var nodes []Node
	err := c.Do(ctx, http.MethodGet, "/v1/nodes", nil, &nodes)
	return nodes, err
}

// Drain takes nodes out of service (administrators only).
func (c *Client) Drain(ctx context.Context, req DrainRequest) (*NodesResponse, error) {
	var resp NodesResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/nodes/drain", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Down declares nodes dead (administrators only).
func (c *Client) Down(ctx context.Context, req DownRequest) (*NodesResponse, error) {
	var resp NodesResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/nodes/down", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Resume puts drained or downed nodes back in service (administrators only).
func (c *Client) Resume(ctx context.Context, req ResumeRequest) (*NodesResponse, error) {
	var resp NodesResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/nodes/resume", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Partitions lists the cluster's partitions.
func (c *Client) Partitions(ctx context.Context) ([]Partition, error) {
	var parts []Partition
	err := c.Do(ctx, http.MethodGet, "/v1/partitions", nil, &parts)
	return parts, err
}

// NodeClient is the node-plane client: signed HTTP/JSON over TCP. ctld uses
// it to reach noded and noded uses it to reach ctld.
type NodeClient struct {
	BaseURL string // e.g. http://127.0.0.1:6817
	Key     []byte
	http    *http.Client
	tls     *tls.Config // the node plane's TLS (nil: plain), for DialApp
}

// NewNodeClient returns a signed client for baseURL.
func NewNodeClient(baseURL string, key []byte, timeout time.Duration) *NodeClient {
	return &NodeClient{BaseURL: baseURL, Key: key, http: &http.Client{Timeout: timeout}}
}

// Do sends a signed JSON request.
func (c *NodeClient) Do(ctx context.Context, method, path string, in, out any) error {
	return doJSON(ctx, c.http, c.BaseURL+path, method, in, out, c.Key, func(err error) error {
		return fmt.Errorf("%s %s: %w", method, c.BaseURL+path, err)
	})
}

// NotConnected says that err is a failure to connect: the request never
// left this host, so no server saw it and sending it again cannot do
// twice what it asks (a noded restarting on a new address).
func NotConnected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Backoff bounds RetryUnconnected: the first pause, doubled up to Max,
// for up to For in all.
type Backoff struct{ First, Max, For time.Duration }

// RetryUnconnected calls try until it returns nil or an error other than
// NotConnected (a node that answers, even with a refusal, gave its
// answer), pausing between tries as b says. Before each new try it calls
// next with the last try's error; next learns where the peer is now (a
// noded restarting on a new address) or gives up with its own error.
func RetryUnconnected(ctx context.Context, b Backoff, try func() error, next func(last error) error) error {
	deadline := time.Now().Add(b.For)
	pause := b.First
	for {
		err := try()
		if err == nil || !NotConnected(err) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("no connection to the node for %v: %w", b.For, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, b.Max)
		if err := next(err); err != nil {
			return err
		}
	}
}

func doJSON(ctx context.Context, hc *http.Client, rawURL, method string, in, out any, key []byte, wrapNet func(error) error) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != nil {
		Sign(req, key, body, time.Now())
	}
	resp, err := hc.Do(req)
	if err != nil {
		return wrapNet(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return wrapNet(err)
	}
	if resp.StatusCode/100 != 2 {
		var e Error
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return &StatusError{Code: resp.StatusCode, Message: e.Error, Kind: e.Kind}
		}
		return &StatusError{Code: resp.StatusCode, Message: fmt.Sprintf("%s: %s", resp.Status, bytes.TrimSpace(data))}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding answer from %s: %w", rawURL, err)
		}
	}
	return nil
}

// CancelStep cancels step stepID of job jobID (POST /v1/steps/cancel):
// its nodes are told to end its tasks, and it ends CANCELLED.
func (c *Client) CancelStep(ctx context.Context, jobID uint64, stepID int) (*Step, error) {
	var st Step
	if err := c.Do(ctx, http.MethodPost, "/v1/steps/cancel", StepCancelRequest{JobID: jobID, StepID: stepID}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Steps lists job id's steps, ended ones included (GET /v1/jobs/{id}/steps).
func (c *Client) Steps(ctx context.Context, id uint64) ([]Step, error) {
	var out []Step
	if err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+strconv.FormatUint(id, 10)+"/steps", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateStep asks ctld for a step in job id (srun inside an allocation).
func (c *Client) CreateStep(ctx context.Context, id uint64, req StepRequest) (*StepGrant, error) {
	var g StepGrant
	if err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+strconv.FormatUint(id, 10)+"/steps", req, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// LaunchStep sends l to the node plane at addr (POST /v1/steps). The step
// credential inside l authorizes it, so the request is not signed; caPEM
// is the grant's CA, required for an https:// addr.
func LaunchStep(ctx context.Context, addr, caPEM string, l *StepLaunch) error {
	hc := &http.Client{}
	if strings.HasPrefix(addr, "https://") {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			return fmt.Errorf("POST %s/v1/steps: no cluster CA to check the node's certificate against", addr)
		}
		hc.Transport = &http.Transport{TLSClientConfig: ClientTLS(pool)}
	}
	return doJSON(ctx, hc, strings.TrimRight(addr, "/")+"/v1/steps", http.MethodPost, l, nil, nil, func(err error) error {
		return fmt.Errorf("POST %s/v1/steps: %w", addr, err)
	})
}

// StepStats fetches a running step's live figures (sstat).
func (c *Client) StepStats(ctx context.Context, id uint64, step int) (*StepStats, error) {
	var out StepStats
	path := "/v1/jobs/" + strconv.FormatUint(id, 10) + "/steps/" + strconv.Itoa(step) + "/stats"
	if err := c.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
