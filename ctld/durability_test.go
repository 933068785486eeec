package ctld

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/store"
)

// helperEnv makes the test binary run a bare controller instead of tests,
// so a test can kill -9 a real controller process.
const helperEnv = "CORRAL_CTLD_TEST_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		srv, err := New(Config{StateDir: filepath.Join(dir, "state"), Socket: filepath.Join(dir, "u.sock"),
			Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		srv.Run(context.Background())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestKill9LosesNothingAcknowledged(t *testing.T) {
	dir, err := os.MkdirTemp("", "ctld")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	client := api.NewClient(filepath.Join(dir, "u.sock"))
	waitFor(t, "helper controller", func() bool {
		return client.Do(context.Background(), "GET", "/v1/ping", nil, nil) == nil
	})
	first, err := client.Submit(context.Background(), api.SubmitRequest{Spec: script("cancel-me")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Cancel(context.Background(), api.CancelRequest{IDs: []uint64{first}}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := map[uint64]string{first: "cancel-me"}
	enough := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("g%d-%d", g, i)
				id, err := client.Submit(context.Background(), api.SubmitRequest{Spec: script(name)})
				if err != nil {
					return // the controller died under us: not acknowledged
				}
				mu.Lock()
				acked[id] = name
				if len(acked) >= 300 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(30 * time.Second):
		t.Fatal("submits too slow to reach 300")
	}
	cmd.Process.Signal(syscall.SIGKILL) // while submits are in flight
	cmd.Wait()
	wg.Wait()

	st, err := store.Open(filepath.Join(dir, "state", store.FileName), store.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	recs, err := st.Jobs()
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	stored := make(map[uint64]store.JobRecord)
	for _, r := range recs {
		stored[r.Job.ID] = *r
	}
	var maxID uint64
	for id, name := range acked {
		maxID = max(maxID, id)
		if r, ok := stored[id]; !ok || r.Job.Name != name {
			t.Errorf("acknowledged job %d (%s) lost: stored %+v", id, name, r.Job.Name)
		}
	}
	if r := stored[first]; r.Job.State != api.StateCancelled {
		t.Errorf("acknowledged cancel lost: job %d is %s", first, r.Job.State)
	}
	t.Logf("%d submits acknowledged before kill -9, %d stored", len(acked), len(stored))

	// A new controller on the same state continues the ID sequence.
	tc := &testCluster{t: t, logs: &lockedBuffer{}, cfg: Config{StateDir: filepath.Join(dir, "state"),
		Socket: filepath.Join(dir, "u2.sock"), Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0)}}
	tc.start()
	defer tc.Stop()
	if next := tc.submit(script("after")); next <= maxID {
		t.Fatalf("ID %d reused (highest acknowledged %d)", next, maxID)
	}
}
