package jobspec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// option is one row of the option table. Every sbatch option corral knows
// lives in this table, whether it is supported (apply set) or accepted and
// ignored with a one-line warning (ignored set); adding one is adding a row.
type option struct {
	long  string
	short byte   // 0: no short form
	arg   string // value placeholder for help ("SIZE"); "" for a flag without value
	help  string
	// commandLineOnly options are refused in #SBATCH lines (they configure
	// this client, not the job).
	commandLineOnly bool
	// ignored options are accepted so that existing scripts still submit,
	// and each use warns once. apply is nil for them.
	ignored bool
	apply   func(r *Request, value string) error
}

// options is the table. Keep it sorted by long name.
var options = []option{
	{long: "account", short: 'A', arg: "NAME", ignored: true, help: "charge the job to an account (ignored)"},
	{long: "chdir", short: 'D', arg: "DIR", help: "run the job in DIR (default: the current directory)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.WorkDir, "chdir", v) }},
	{long: "comment", arg: "TEXT", ignored: true, help: "attach a comment (ignored)"},
	{long: "cpus-per-task", short: 'c', arg: "N", help: "CPUs for the job (default 1)",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.CPUs, "cpus-per-task", v) }},
	{long: "error", short: 'e', arg: "PATTERN", help: "stderr file (default: the --output file); %j %x %u %N %n %%",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Error, "error", v) }},
	{long: "help", short: 'h', commandLineOnly: true, help: "show this help",
		apply: func(r *Request, _ string) error { r.Help = true; return nil }},
	{long: "job-name", short: 'J', arg: "NAME", help: "name of the job (default: the script's file name)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Name, "job-name", v) }},
	{long: "mail-type", arg: "TYPE", ignored: true, help: "mail on job events (ignored)"},
	{long: "mail-user", arg: "ADDRESS", ignored: true, help: "where mail goes (ignored)"},
	{long: "mem", arg: "SIZE", help: "memory per node: a number with K, M, G or T (bare = MiB)",
		apply: func(r *Request, v string) error { return setSize(&r.Spec.MemBytes, "mem", v) }},
	{long: "nodes", short: 'N', arg: "N", help: "number of nodes (default 1)",
		apply: func(r *Request, v string) error { return setCount(&r.Spec.Nodes, "nodes", v) }},
	{long: "output", short: 'o', arg: "PATTERN", help: "stdout file (default " + DefaultOutput + "); %j %x %u %N %n %%",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Output, "output", v) }},
	{long: "parsable", help: "print only the job ID",
		apply: func(r *Request, _ string) error { r.Parsable = true; return nil }},
	{long: "partition", short: 'p', arg: "NAME", help: "partition to run in (default: the cluster's default)",
		apply: func(r *Request, v string) error { return setText(&r.Spec.Partition, "partition", v) }},
	{long: "qos", short: 'q', arg: "NAME", ignored: true, help: "quality of service (ignored)"},
	{long: "shm", arg: "SIZE", help: "size of the job's /dev/shm (default 64M, at most --mem)",
		apply: func(r *Request, v string) error { return setSize(&r.Spec.ShmBytes, "shm", v) }},
	{long: "socket", arg: "PATH", commandLineOnly: true, help: "controller socket (default $CORRAL_SOCKET or /run/corral/ctld.sock)",
		apply: func(r *Request, v string) error { return setText(&r.Socket, "socket", v) }},
	{long: "time", short: 't', arg: "TIME", help: "time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED",
		apply: func(r *Request, v string) error {
			n, ok := parseTimeLimit(v)
			if !ok {
				return badValue("time", v, timeHint)
			}
			r.Spec.TimeLimit = n
			return nil
		}},
	{long: "uid", arg: "USER", help: "submit for another user (root only)",
		apply: func(r *Request, v string) error { return setText(&r.OnBehalfOf, "uid", v) }},
	{long: "wrap", arg: "COMMAND", commandLineOnly: true, help: "run COMMAND with /bin/sh instead of a script",
		apply: func(r *Request, v string) error {
			// A command may span lines; only NUL cannot be in a script.
			if strings.TrimSpace(v) == "" || strings.IndexByte(v, 0) >= 0 {
				return badValue("wrap", v, "give a non-empty shell command")
			}
			r.wrap = &v
			return nil
		}},
}

func badValue(name, value, hint string) error {
	return fmt.Errorf("invalid --%s %q: %s", name, value, hint)
}

// setText stores a non-empty, single-line value: names and paths end up in
// tables and Key=Value lines, where a newline or control byte would forge
// output.
func setText(dst *string, name, v string) error {
	if v == "" {
		return fmt.Errorf("--%s must not be empty", name)
	}
	for _, c := range v {
		if c < ' ' || c == 0x7f {
			return badValue(name, v, "control characters are not allowed")
		}
	}
	*dst = v
	return nil
}

func setCount(dst *int, name, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return badValue(name, v, "use a whole number")
	}
	if n < 1 {
		return fmt.Errorf("--%s must be at least 1 (got %d)", name, n)
	}
	*dst = n
	return nil
}

func setSize(dst *int64, name, v string) error {
	n, ok := parseSize(v)
	if !ok {
		return badValue(name, v, sizeHint)
	}
	*dst = n
	return nil
}

// lookupLong finds an option by its long name or, as getopt_long does, by
// an unambiguous prefix of it.
func lookupLong(name string) (*option, error) {
	var matches []*option
	for i := range options {
		o := &options[i]
		if o.long == name {
			return o, nil
		}
		if strings.HasPrefix(o.long, name) {
			matches = append(matches, o)
		}
	}
	switch {
	case len(matches) == 1 && name != "":
		return matches[0], nil
	case len(matches) > 1 && name != "":
		names := make([]string, len(matches))
		for i, o := range matches {
			names[i] = "--" + o.long
		}
		return nil, fmt.Errorf("option --%s is ambiguous (%s)", show(name), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("unrecognized option %s", show("--"+name))
}

func lookupShort(c byte) (*option, error) {
	for i := range options {
		if options[i].short == c && c != 0 {
			return &options[i], nil
		}
	}
	if c <= ' ' || c >= 0x7f {
		return nil, fmt.Errorf("unrecognized option byte 0x%02x after -", c)
	}
	return nil, fmt.Errorf("unrecognized option -%c", c)
}

// setting is one option as written, not yet applied.
type setting struct {
	opt   *option
	value string
}

// parseOptions reads options getopt-style: --long=value, --long value,
// -s value, -svalue and clustered flags (-hx). On the command line it stops
// at "--" or the first word that is not an option and returns the rest (the
// script and its arguments); in a directive any such word is an error.
func parseOptions(args []string, commandLine bool) (sets []setting, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if !commandLine {
				return nil, nil, fmt.Errorf("unexpected argument %q", a)
			}
			return sets, args[i+1:], nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := lookupLong(name)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case o.arg == "" && hasValue:
				return nil, nil, fmt.Errorf("option --%s takes no value", o.long)
			case o.arg != "" && !hasValue:
				if i+1 >= len(args) {
					return nil, nil, missingValue(o)
				}
				i++
				value = args[i]
			}
			sets = append(sets, setting{opt: o, value: value})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				o, err := lookupShort(a[j])
				if err != nil {
					return nil, nil, err
				}
				if o.arg == "" {
					sets = append(sets, setting{opt: o})
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, nil, missingValue(o)
					}
					i++
					value = args[i]
				}
				sets = append(sets, setting{opt: o, value: value})
				break
			}
		default:
			if !commandLine {
				return nil, nil, fmt.Errorf("unexpected argument %q", a)
			}
			return sets, args[i:], nil
		}
	}
	return sets, nil, nil
}

func missingValue(o *option) error {
	return fmt.Errorf("option --%s needs a value (%s)", o.long, o.arg)
}

// OptionsHelp lists every option, one per line, for `corral submit --help`.
func OptionsHelp() string {
	rows := make([]option, len(options))
	copy(rows, options)
	sort.Slice(rows, func(a, b int) bool { return rows[a].long < rows[b].long })
	var b strings.Builder
	for _, o := range rows {
		left := "    "
		if o.short != 0 {
			left = "-" + string(o.short) + ", "
		}
		left += "--" + o.long
		if o.arg != "" {
			left += " " + o.arg
		}
		fmt.Fprintf(&b, "  %-28s %s\n", left, o.help)
	}
	return b.String()
}
