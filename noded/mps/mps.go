package mps

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultControl is NVIDIA's control program, looked up on PATH.
const DefaultControl = "nvidia-cuda-mps-control"

// readyTimeout bounds how long a started daemon may take to answer.
const readyTimeout = 10 * time.Second

// Supervisor runs the control daemons of one node.
type Supervisor struct {
	control string // the control program
	dir     string // per GPU: <dir>/<uuid>/pipe and /log
	logf    func(format string, args ...any)

	mu   sync.Mutex
	gpus map[string]*daemon
}

type daemon struct {
	uuid  string
	users int
}

// Client is what a job needs to reach its GPU's daemon.
type Client struct {
	PipeDir string // CUDA_MPS_PIPE_DIRECTORY
	LogDir  string // CUDA_MPS_LOG_DIRECTORY
}

// Env is the job's MPS environment.
func (c Client) Env() []string {
	return []string{"CUDA_MPS_PIPE_DIRECTORY=" + c.PipeDir, "CUDA_MPS_LOG_DIRECTORY=" + c.LogDir}
}

// New returns a supervisor that runs control (a path, or a name on PATH)
// with its per-GPU directories under dir. It checks that control can be
// run; nothing is started until Acquire.
func New(control, dir string, logf func(string, ...any)) (*Supervisor, error) {
	path, err := exec.LookPath(control)
	if err != nil {
		return nil, fmt.Errorf("MPS control program %s: %w", control, err)
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("MPS directory %q is not absolute", dir)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("MPS directory: %w", err)
	}
	return &Supervisor{control: path, dir: dir, logf: logf, gpus: map[string]*daemon{}}, nil
}

// ClientOf names the directories of a GPU's daemon.
func (s *Supervisor) ClientOf(uuid string) Client {
	base := filepath.Join(s.dir, uuid)
	return Client{PipeDir: filepath.Join(base, "pipe"), LogDir: filepath.Join(base, "log")}
}

// Acquire makes sure the daemon of the GPU runs and counts one more user.
func (s *Supervisor) Acquire(uuid string) (Client, error) {
	if err := checkUUID(uuid); err != nil {
		return Client{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.gpus[uuid]
	if d == nil {
		if err := s.start(uuid); err != nil {
			return Client{}, err
		}
		d = &daemon{uuid: uuid}
		s.gpus[uuid] = d
	}
	d.users++
	return s.ClientOf(uuid), nil
}

// Adopt counts a user of a daemon that an earlier node daemon started,
// for a job that outlived it; the daemon is started if it is not running.
func (s *Supervisor) Adopt(uuid string) error {
	_, err := s.Acquire(uuid)
	return err
}

// Release counts one user less and stops the daemon when none is left.
func (s *Supervisor) Release(uuid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.gpus[uuid]
	if d == nil {
		return nil
	}
	if d.users--; d.users > 0 {
		return nil
	}
	delete(s.gpus, uuid)
	return s.stop(uuid)
}

// Users is how many users each running daemon has, by GPU UUID.
func (s *Supervisor) Users() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for u, d := range s.gpus {
		out[u] = d.users
	}
	return out
}

// Check restarts the daemons in use that no longer answer.
func (s *Supervisor) Check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uuid := range s.gpus {
		if s.alive(uuid) {
			continue
		}
		s.logf("mps: the control daemon of %s stopped answering; starting it again", uuid)
		if err := s.start(uuid); err != nil {
			s.logf("mps: %v", err)
		}
	}
}

// StopIdle stops the daemons found in the directory that nobody uses:
// those an earlier node daemon left behind.
func (s *Supervisor) StopIdle() {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range ents {
		uuid := e.Name()
		if !e.IsDir() || s.gpus[uuid] != nil || checkUUID(uuid) != nil {
			continue
		}
		if s.alive(uuid) {
			s.logf("mps: stopping the idle control daemon of %s", uuid)
			if err := s.stop(uuid); err != nil {
				s.logf("mps: %v", err)
			}
		}
	}
}

// Close stops every daemon.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	uuids := make([]string, 0, len(s.gpus))
	for u := range s.gpus {
		uuids = append(uuids, u)
	}
	sort.Strings(uuids)
	for _, u := range uuids {
		delete(s.gpus, u)
		errs = append(errs, s.stop(u))
	}
	return errors.Join(errs...)
}

// start runs `control -d` for the GPU and waits until it answers.
func (s *Supervisor) start(uuid string) error {
	c := s.ClientOf(uuid)
	for _, d := range []string{c.PipeDir, c.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("mps: %w", err)
		}
	}
	if s.alive(uuid) {
		return nil // left running by an earlier node daemon
	}
	if _, err := s.run(uuid, "", "-d"); err != nil {
		return fmt.Errorf("mps: starting the control daemon of %s: %w", uuid, err)
	}
	deadline := time.Now().Add(readyTimeout)
	for !s.alive(uuid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("mps: the control daemon of %s did not answer within %s", uuid, readyTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.logf("mps: control daemon of %s started (pipes in %s)", uuid, c.PipeDir)
	return nil
}

// stop tells the daemon to quit; one that is already gone is fine.
func (s *Supervisor) stop(uuid string) error {
	if !s.alive(uuid) {
		return nil
	}
	if _, err := s.run(uuid, "quit\n"); err != nil {
		return fmt.Errorf("mps: stopping the control daemon of %s: %w", uuid, err)
	}
	s.logf("mps: control daemon of %s stopped", uuid)
	return nil
}

// alive asks the daemon for its servers.
func (s *Supervisor) alive(uuid string) bool {
	_, err := s.run(uuid, "get_server_list\n")
	return err == nil
}

// run runs the control program for one GPU with input on stdin. Its
// output goes to a file, not a pipe: `-d` leaves a daemon behind that
// would hold a pipe open.
func (s *Supervisor) run(uuid, input string, args ...string) (string, error) {
	c := s.ClientOf(uuid)
	out, err := os.CreateTemp(c.LogDir, "control-*.out")
	if err != nil {
		return "", err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.Command(s.control, args...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES="+uuid, "CUDA_MPS_PIPE_DIRECTORY="+c.PipeDir, "CUDA_MPS_LOG_DIRECTORY="+c.LogDir)
	cmd.Stdin = strings.NewReader(input)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = c.LogDir
	runErr := cmd.Run()
	b, _ := os.ReadFile(out.Name())
	text := strings.TrimSpace(string(b))
	if runErr != nil {
		if text != "" {
			return text, fmt.Errorf("%v: %s", runErr, oneLine(text))
		}
		return text, runErr
	}
	return text, nil
}

func oneLine(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strings.ReplaceAll(s, "\n", " | ")
}

// checkUUID refuses what could not be a GPU UUID (it names a directory).
func checkUUID(uuid string) error {
	if !strings.HasPrefix(uuid, "GPU-") || strings.ContainsAny(uuid, "/\x00") || len(uuid) > 100 {
		return fmt.Errorf("mps: %q is not a GPU UUID", uuid)
	}
	return nil
}
