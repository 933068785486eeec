package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"os/user"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
)

// The terminal's xterm.js files are compiled in: a controller built
// without `make web-assets` would serve a terminal page that cannot work,
// so this fails and says what to run.
func TestTerminalAssetsEmbedded(t *testing.T) {
	if err := terminalAssets(static); err != nil {
		t.Fatalf("%v", err)
	}
}

// Without the vendored files the page's check names the missing file and
// the command that brings it.
func TestTerminalAssetsMissingSaySo(t *testing.T) {
	files := fstest.MapFS{"static/vendor/xterm.js": {}, "static/vendor/xterm.css": {}}
	err := terminalAssets(files)
	if !errors.Is(err, errNoAssets) || !strings.Contains(err.Error(), "run make web-assets") || !strings.Contains(err.Error(), "addon-fit.js") {
		t.Fatalf("missing addon-fit.js: %v", err)
	}
}

// The terminal's command runs the user's login shell from the user
// database it finds (the container's, on a node), with HOME, USER and
// SHELL from it; a user without an entry gets /bin/sh.
func TestTerminalShellIsTheLoginShell(t *testing.T) {
	run := func(uid string) string {
		t.Helper()
		argv := shellArgv(0)
		argv[len(argv)-1] = uid
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "USER=before"}
		cmd.Stdin = strings.NewReader(`echo "$SHELL|$USER|$HOME"` + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the terminal's command for uid %s: %v: %s", uid, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := exec.Command("getent", "passwd", me.Uid).Output()
	if err != nil {
		t.Fatalf("getent passwd %s: %v", me.Uid, err)
	}
	f := strings.Split(strings.TrimSpace(string(entry)), ":")
	if got, want := run(me.Uid), f[6]+"|"+me.Username+"|"+me.HomeDir; got != want {
		t.Errorf("uid %s: %q, want %q", me.Uid, got, want)
	}
	if got := run("3999999"); got != "/bin/sh|before|" {
		t.Errorf("a uid without an account: %q, want /bin/sh and the environment's user", got)
	}
}

// TestPingSocket: a socket whose browser answers pings stays open; one
// that stops answering (nothing reads it, as with a vanished laptop) is
// closed by the pinging side.
func TestPingSocket(t *testing.T) {
	// Long enough that a loaded machine answers a ping in time.
	const every = 400 * time.Millisecond
	ended := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { ended <- struct{}{} }()
		go pingSocket(r.Context(), c, every)
		for { // the terminal's read loop
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	answering := dial()
	defer answering.CloseNow()
	go func() { _, _, _ = answering.Read(ctx) }() // reading sends the pongs
	time.Sleep(5 * every)
	select {
	case <-ended:
		t.Fatal("the server closed a socket that answered its pings")
	default:
	}
	silent := dial() // never read: no pong goes back
	defer silent.CloseNow()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a socket that stopped answering pings was never closed")
	}
}
