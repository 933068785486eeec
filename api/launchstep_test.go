package api

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLaunchStepTLS: a launch reaches an https node only when the grant's
// CA vouches for the node's certificate.
func TestLaunchStepTLS(t *testing.T) {
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got StepLaunch
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/steps" {
			http.NotFound(w, r)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte("{}"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	caPEM := string(ca.PEM)
	ctx := context.Background()
	l := &StepLaunch{Argv: []string{"hostname"}, IOAddr: "127.0.0.1:9", IOToken: "tok"}
	if err := LaunchStep(ctx, srv.URL, caPEM, l); err != nil {
		t.Fatalf("launch with the right CA: %v", err)
	}
	if got.IOToken != "tok" || got.Argv[0] != "hostname" {
		t.Errorf("node received %+v", got)
	}
	if err := LaunchStep(ctx, srv.URL, "", l); err == nil || !strings.Contains(err.Error(), "no cluster CA") {
		t.Errorf("launch without a CA: %v", err)
	}
	other, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherPEM := string(other.PEM)
	if err := LaunchStep(ctx, srv.URL, otherPEM, l); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("launch with another CA: %v", err)
	}
}

// TestLaunchStepRefusal: a node's refusal comes back as its message.
func TestLaunchStepRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(Error{Error: "invalid step credential: expired"})
	}))
	defer srv.Close()
	err := LaunchStep(context.Background(), srv.URL, "", &StepLaunch{})
	if err == nil || err.Error() != "invalid step credential: expired" {
		t.Errorf("refused launch: %v", err)
	}
}
