package initproto

// Paths inside the container.
const (
	// Dir holds corral's own files inside the container (read-only).
	Dir = "/.corral"
	// InitPath is where corral-init is bind-mounted.
	InitPath = "/.corral/init"
	// ScriptPath is where the job's script is bind-mounted.
	ScriptPath = "/.corral/script"
)

// ReportFD is the file descriptor on which corral-init talks to the shim.
// The shim passes the write end of a pipe there (libcontainer
// Process.ExtraFiles[0]). corral-init writes two lines: Ready as soon as
// it forwards signals, then its Report as one JSON object just before it
// exits.
//
// Ready matters: PID 1 of a namespace ignores signals it has no handler
// for, so a SIGTERM sent between the container's start and corral-init
// installing its handlers would be lost. The shim holds a stop's SIGTERM
// until Ready.
const ReportFD = 3

// With StdioArg before the script, corral-init takes the job's stdin,
// stdout and stderr from StdinFD, StdoutFD and StderrFD
// (Process.ExtraFiles[1:4]) and moves them to 0, 1 and 2, for itself and
// the script. They do not go as libcontainer's own stdio because runc's
// init fchowns that to the container's user (fixStdioPermissions), which
// would give the user any file they may merely open, a root-owned
// --input for one; its stdio is /dev/null, which it leaves alone. An
// argument, not "fd 4 is open", says so: a Go program's runtime may
// have opened fds of its own by the time main runs.
const (
	StdioArg = "--stdio-fds"
	StdinFD  = 4
	StdoutFD = 5
	StderrFD = 6
)

// HoldArg in place of a script makes corral-init hold the container
// without running anything: a job's extern role, on the nodes where its
// batch script does not run, kept for the job's steps. It forwards
// signals to every process of the namespace (the steps' tasks), reaps
// the orphans, and on SIGTERM, SIGINT or SIGHUP waits for the other
// processes to end (the shim kills the namespace after its kill wait),
// then reports exit code 0.
const HoldArg = "--hold"

// Ready is corral-init's first line on ReportFD.
const Ready = "ready"

// Report says how the script ended. Without it (corral-init was killed
// with SIGKILL) the shim goes by corral-init's own wait status.
type Report struct {
	// ExitCode is the script's exit status, or 128+Signal when a signal
	// ended it (the shell convention, also corral-init's own exit status).
	ExitCode int `json:"exit_code"`
	// Signal is the signal that ended the script, 0 if it exited.
	Signal int `json:"signal,omitempty"`
	// Error is set when the script could not be started at all.
	Error string `json:"error,omitempty"`
}

// ForwardedSignals are the signals corral-init passes on to every process
// of the job (by number, so this package needs no syscall import):
// SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGTERM, SIGCONT.
var ForwardedSignals = []int{1, 2, 10, 12, 15, 18}
