package web

import "strconv"

// terminalEnv is the terminal shell's environment; the node adds the
// job's and step's variables (SLURM_JOB_ID, ...), and shellScript the
// user's own (HOME, USER, SHELL) from the container's user database.
var terminalEnv = []string{
	"TERM=xterm-256color",
	"COLORTERM=truecolor",
	"LANG=C.UTF-8",
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
}

// shellScript runs, inside the session's container, the login shell of
// the user ($1, a uid) as the container's user database names it, if it
// is there, else /bin/sh. It is looked up in there because an image may
// lack the shell the host's /etc/passwd names.
const shellScript = `uid=$1 entry=
if command -v getent >/dev/null 2>&1; then entry=$(getent passwd "$uid"); fi
if [ -z "$entry" ] && [ -r /etc/passwd ]; then
	while IFS=: read -r n p u rest; do
		if [ "$u" = "$uid" ]; then entry="$n:$p:$u:$rest"; break; fi
	done </etc/passwd
fi
shell=/bin/sh
if [ -n "$entry" ]; then
	IFS=:; set -f; set -- $entry; set +f; unset IFS
	if [ -n "$1" ]; then USER=$1 LOGNAME=$1; export USER LOGNAME; fi
	if [ -n "$6" ]; then HOME=$6; export HOME; fi
	case $7 in /*) if [ -x "$7" ] && [ ! -d "$7" ]; then shell=$7; fi ;; esac
fi
SHELL=$shell; export SHELL
exec "$shell"
`

// shellArgv is the terminal's command for the job of uid.
func shellArgv(uid uint32) []string {
	return []string{"/bin/sh", "-c", shellScript, "corral-terminal", strconv.FormatUint(uint64(uid), 10)}
}
