package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corral-hpc/corral/api"
)

// jupyterNotebook is Debian's jupyter-notebook (6.x), run in a session
// without an image: the job sees the host's file system.
const jupyterNotebook = "/usr/bin/jupyter-notebook"

// TestJupyterThroughAppProxy (seeds 002/003): Debian's Jupyter runs in a
// session publishing it as an app, started with the base URL corral
// gives it; through the dashboard the notebook's tree page loads, a
// notebook and its kernel are created with Jupyter's REST API, and a
// cell (1+1) runs over the kernel's websocket and answers 2. Another
// user's request for the same URL gets 403.
func TestJupyterThroughAppProxy(t *testing.T) {
	c, base := startWebCluster(t)
	const token = "e2e-jupyter-token"
	id, out := startJupyter(t, c, token)
	owner := newAppBrowser(t, base)
	signInAsCaller(t, c, owner)
	app := "/apps/" + strconv.FormatUint(id, 10) + "/jupyter/"

	tree, _ := waitApp(t, owner, app+"tree?token="+token, 60*time.Second, out)
	if !strings.Contains(tree, app+"static/") {
		t.Fatalf("the tree page does not load its assets under %s:\n%.2000s", app, tree)
	}

	auth := "token " + token // what Jupyter's REST clients send; its own cookie works as well
	var nb struct{ Path string }
	post(t, owner, app+"api/contents", auth, `{"type": "notebook"}`, http.StatusCreated, &nb)
	var session struct {
		ID     string
		Kernel struct{ ID string }
	}
	post(t, owner, app+"api/sessions", auth, `{"path": "`+nb.Path+`", "type": "notebook", "kernel": {"name": "python3"}}`,
		http.StatusCreated, &session)
	if session.Kernel.ID == "" {
		t.Fatalf("no kernel in the new session: %+v", session)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(base, "http") + app + "api/kernels/" + session.Kernel.ID + "/channels?session_id=" + session.ID
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{
		"Cookie": {owner.cookie()}, "Origin": {base}, "Authorization": {auth}}})
	if err != nil {
		t.Fatalf("the kernel's websocket through the proxy: %v", err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	if got := runCell(t, ctx, ws, session.ID, "1+1"); got != "2" {
		t.Errorf("1+1 gave %q, want 2", got)
	}

	other := newAppBrowser(t, base)
	if code, _, _ := other.get("/", "X-Remote-User", "nobody"); code != http.StatusOK {
		t.Fatalf("nobody's sign-on: %d", code)
	}
	if code, body, _ := other.get(app + "tree?token=" + token); code != http.StatusForbidden {
		t.Errorf("another user's request for the notebook: %d, want 403\n%.500s", code, body)
	}
	if r := c.Corral("cancel", strconv.FormatUint(id, 10)); r.Code != 0 {
		t.Fatalf("cancel: %s", r.Stderr)
	}
	c.WaitEnded(id, 30*time.Second)
}

// startJupyter starts a session running Debian's Jupyter as its app
// "jupyter" with the given token, and returns the job and the file its
// output goes to once the session runs.
func startJupyter(t *testing.T, c *Cluster, token string) (uint64, string) {
	t.Helper()
	if _, err := os.Stat(jupyterNotebook); err != nil {
		t.Fatalf("%s: %v: install jupyter-notebook (scripts/install-deps.sh)", jupyterNotebook, err)
	}
	dir := jobDir(t)
	for _, d := range []string{"home", "notebooks"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := "export HOME=$PWD/home JUPYTER_RUNTIME_DIR=/tmp/jupyter\n" +
		"exec " + jupyterNotebook + " --no-browser --allow-root --ip=127.0.0.1 --port=$CORRAL_APP_JUPYTER_PORT" +
		" --NotebookApp.base_url=$CORRAL_APP_JUPYTER_URL --NotebookApp.allow_remote_access=True" +
		" --NotebookApp.token=" + token + " --notebook-dir=$PWD/notebooks\n"
	out := filepath.Join(dir, "jupyter.out")
	id := c.Submit(dir, "--app", "jupyter="+strconv.Itoa(freePort(t)), "-J", "notebook", "-c", "1", "--mem", "1G", "-t", "5",
		"-o", out, "--wrap", script)
	c.WaitState(id, api.StateRunning, 30*time.Second)
	return id, out
}

// post sends a JSON body through the proxy and decodes the answer.
func post(t *testing.T, b *appBrowser, path, auth, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		var msg json.RawMessage
		json.NewDecoder(resp.Body).Decode(&msg)
		t.Fatalf("POST %s: %d, want %d: %s", path, resp.StatusCode, want, msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
}

// kernelMsg is a Jupyter message on a kernel's websocket.
type kernelMsg struct {
	Header       map[string]any `json:"header"`
	ParentHeader map[string]any `json:"parent_header"`
	Metadata     map[string]any `json:"metadata"`
	Content      map[string]any `json:"content"`
	Channel      string         `json:"channel"`
	MsgType      string         `json:"msg_type,omitempty"`
}

// runCell executes code on the kernel and returns its result as text.
func runCell(t *testing.T, ctx context.Context, ws *websocket.Conn, session, code string) string {
	t.Helper()
	const msgID = "e2e-execute-1"
	req := kernelMsg{
		Header: map[string]any{"msg_id": msgID, "username": "e2e", "session": session, "msg_type": "execute_request",
			"version": "5.3", "date": time.Now().UTC().Format(time.RFC3339)},
		ParentHeader: map[string]any{}, Metadata: map[string]any{}, Channel: "shell",
		Content: map[string]any{"code": code, "silent": false, "store_history": true, "user_expressions": map[string]any{},
			"allow_stdin": false, "stop_on_error": true},
	}
	data, _ := json.Marshal(req)
	if err := ws.Write(ctx, websocket.MessageText, data); err != nil {
		t.Fatalf("sending the cell: %v", err)
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the cell's result: %v", err)
		}
		var m kernelMsg
		if json.Unmarshal(data, &m) != nil || m.ParentHeader["msg_id"] != msgID {
			continue
		}
		switch m.Header["msg_type"] {
		case "execute_result":
			d, _ := m.Content["data"].(map[string]any)
			s, _ := d["text/plain"].(string)
			return s
		case "error":
			t.Fatalf("the cell failed: %v", m.Content)
		}
	}
}
