package ctld

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corral-hpc/corral/api"
)

// The dashboard's cost to the controller (issue 16, "Performance"): the
// first screen of the sessions page with 100,000 jobs queued, 50 idle
// live pages, and one change fanned out to 50 pages that each re-read
// themselves. docs/benchmarks.md ("Dashboard") has the figures and the
// commands.

// benchQueued is the length of the queue the dashboard benchmarks use.
const benchQueued = 100_000

// dashboardBench is a controller serving the dashboard with benchQueued
// pending jobs of uidOwner, put straight into the queue's memory
// (trackJobs: a durable submit of each would take minutes). Its
// scheduling runs on events only, and the benchmarks cause none, so what
// they measure is the dashboard. The per-uid rate limit is off: 50
// browsers of one user re-reading a page at once send 200 requests, the
// default burst.
func dashboardBench(b *testing.B) (*testCluster, string) {
	tc := MustServer(b, eventsOnly, withPartitions(matrixConf), func(c *Config) {
		c.WebListen, c.RateLimit = "127.0.0.1:0", -1
		c.Logger = log.New(io.Discard, "", 0)
	})
	spec := script("train")
	spec.Script = "#!/bin/bash\n#SBATCH -J train -c 1 --mem 1M\nset -e\ncd \"$HOME/project\"\npython3 train.py --epochs 10 --data /data/set\n"
	spec.Env = []string{"HOME=/root", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	trackJobs(b, tc, uidOwner, spec, api.StatePending, idRange(1, benchQueued)...)
	return tc, "http://" + tc.srv.web.Addr()
}

// benchBrowser is a signed-in browser of uid: an HTTP client keeping the
// session cookie.
func benchBrowser(b *testing.B, tc *testCluster, base string, uid uint32) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Jar: jar}
	code, out := callAs(b, tc, uid, http.MethodPost, "/v1/dashboard/login", nil)
	var l api.DashboardLogin
	if code != http.StatusOK || json.Unmarshal(out, &l) != nil {
		b.Fatalf("login link: %d %s", code, out)
	}
	resp, err := hc.Get(l.URL) // follows the redirect to the sessions page
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("signing in: %d", resp.StatusCode)
	}
	return hc
}

// getPage fetches the sessions page whole and says whether it lists job id.
func getPage(hc *http.Client, base string, id uint64) (bool, error) {
	resp, err := hc.Get(base + "/")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, &api.StatusError{Code: resp.StatusCode, Message: string(page)}
	}
	return strings.Contains(string(page), `data-job-id="`+strconv.FormatUint(id, 10)+`"`), nil
}

// BenchmarkDashboardSessions100k: one GET / (the sessions page's first
// screen) of the user who owns the 100,000 queued jobs, over real HTTP.
// Target: under 1 s.
//
//	go test -tags seccomp -run '^$' -bench 'DashboardSessions100k$' -benchtime 20x ./ctld/
func BenchmarkDashboardSessions100k(b *testing.B) {
	tc, base := dashboardBench(b)
	hc := benchBrowser(b, tc, base, uidOwner)
	b.ResetTimer()
	for range b.N {
		if shown, err := getPage(hc, base, benchQueued); err != nil || !shown {
			b.Fatalf("the page (%v) does not show the newest job %d", err, benchQueued)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveBrowsers opens n event streams of uidOwner's browsers; each calls
// onChange (if set) with its browser on every "changed" event. They end
// with the benchmark.
func liveBrowsers(b *testing.B, tc *testCluster, base string, n int, onChange func(*http.Client)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	connected := make(chan error, n)
	for range n {
		hc := benchBrowser(b, tc, base, uidOwner)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
			resp, err := hc.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = &api.StatusError{Code: resp.StatusCode, Message: "events"}
			}
			connected <- err
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() == "event: changed" && onChange != nil {
					onChange(hc)
				}
			}
		}()
	}
	for range n {
		if err := <-connected; err != nil {
			b.Fatalf("an event stream: %v", err)
		}
	}
}

// BenchmarkDashboardIdleSSE: the CPU time of the whole process (the
// controller and the 50 clients reading their streams) over a window of
// 31 s, with 50 event streams open and nothing changing, as % of one
// core; base-cpu-% is the same window before the streams open. The
// window outlasts the streams' 30 s keep-alive, so each stream sends one.
// Target: under 5% of one core.
//
//	go test -tags seccomp -run '^$' -bench 'DashboardIdleSSE$' -benchtime 1x ./ctld/
func BenchmarkDashboardIdleSSE(b *testing.B) {
	const window = 31 * time.Second
	tc, base := dashboardBench(b)
	busy := func() float64 {
		c0, t0 := cpuTime(b), time.Now()
		time.Sleep(window)
		return 100 * float64(cpuTime(b)-c0) / float64(time.Since(t0))
	}
	b.ResetTimer()
	var base0, with float64
	for range b.N {
		base0 += busy()
		liveBrowsers(b, tc, base, 50, nil)
		with += busy()
	}
	b.ReportMetric(base0/float64(b.N), "base-cpu-%")
	b.ReportMetric(with/float64(b.N), "cpu-%")
}

// BenchmarkDashboardChangeFanout: one change to the jobs (what a commit
// tells the dashboard) with 50 pages open on the 100,000-job queue, each
// re-reading itself when told, as live.js does; an op ends when all 50
// have the new page. ms/op is the wall time (it includes the streams'
// 200 ms coalescing); cpu-ms/op the process's CPU time for it, both
// sides of the 50 requests included.
//
//	go test -tags seccomp -run '^$' -bench 'DashboardChangeFanout$' -benchtime 5x ./ctld/
func BenchmarkDashboardChangeFanout(b *testing.B) {
	const pages = 50
	tc, base := dashboardBench(b)
	reread := make(chan error, pages)
	liveBrowsers(b, tc, base, pages, func(hc *http.Client) {
		shown, err := getPage(hc, base, benchQueued)
		if err == nil && !shown {
			err = io.ErrUnexpectedEOF
		}
		reread <- err
	})
	b.ResetTimer()
	c0 := cpuTime(b)
	for range b.N {
		tc.srv.web.changed()
		for range pages {
			if err := <-reread; err != nil {
				b.Fatalf("a page's re-read: %v", err)
			}
		}
	}
	cpu := cpuTime(b) - c0
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
