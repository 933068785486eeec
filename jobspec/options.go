package jobspec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// option is one row of the option table (table.go). Every sbatch option
// lives in the table, whether it is supported (apply set) or accepted and
// ignored with a one-line warning (ignore set); adding one is adding a row.
type option struct {
	long  string
	short byte   // 0: no short form
	arg   string // value placeholder for help ("SIZE"); "" for a flag without value
	// optionalArg options take a value only when it is attached
	// (--nice=5, -koff), as getopt's optional arguments do.
	optionalArg bool
	help        string
	// values lists the words the value may be, for shell completion.
	values []string
	// commandLineOnly options are refused in #SBATCH lines (they configure
	// this client, not the job).
	commandLineOnly bool
	// hidden options are sbatch's undocumented aliases: accepted, but left
	// out of help and completion.
	hidden bool
	// corral marks corral's own options, which sbatch does not have.
	corral bool
	// ignore says why corral ignores the option ("this cluster sends no
	// mail"); each use warns once. apply is nil for such options.
	ignore string
	apply  func(r *Request, value string) error
	// check, on an ignored option, refuses a value sbatch refuses: a
	// script with a typo fails here as it would there.
	check func(value string) error
}

// Option describes one submit option for help, shell completion and
// documentation.
type Option struct {
	Long        string
	Short       byte   // 0: none
	Arg         string // value placeholder; "" for a flag
	OptionalArg bool   // the value must be attached: --opt=value
	Help        string
	Values      []string // the words the value may be, if a fixed set
	// Ignored is why corral accepts the option without acting on it; ""
	// when it is supported.
	Ignored         string
	CommandLineOnly bool
	Hidden          bool // an undocumented sbatch alias
	Corral          bool // corral's own option, not sbatch's
	// EnvVar is sbatch's input environment variable for the option
	// (SBATCH_PARTITION), "" if it has none (env.go).
	EnvVar string
}

// Options lists every option `corral submit` accepts, sorted by long name.
func Options() []Option {
	out := make([]Option, len(options))
	for i, o := range options {
		out[i] = Option{Long: o.long, Short: o.short, Arg: o.arg, OptionalArg: o.optionalArg, Help: o.help,
			Values: append([]string(nil), o.values...), Ignored: o.ignore, CommandLineOnly: o.commandLineOnly,
			Hidden: o.hidden, Corral: o.corral, EnvVar: envVarOf(o.long)}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Long < out[b].Long })
	return out
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
	if hasControl(v) {
		return badValue(name, v, "control characters are not allowed")
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
	if n > maxCount {
		return fmt.Errorf("--%s must be at most %d (got %d)", name, maxCount, n)
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
		names := make([]string, 0, len(matches))
		for _, o := range matches {
			if !o.hidden {
				names = append(names, "--"+o.long)
			}
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
// -s value, -svalue and clustered flags (-hx); an optional value must be
// attached (--nice=5, -koff). On the command line it stops at "--" or the
// first word that is not an option and returns the rest (the script and
// its arguments); in a directive any such word is an error.
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
			case o.arg != "" && !hasValue && !o.optionalArg:
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
				if value == "" && !o.optionalArg {
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

// usage spells an option for help: "-c, --cpus-per-task N".
func (o *option) usage() string {
	left := "    "
	if o.short != 0 {
		left = "-" + string(o.short) + ", "
	}
	left += "--" + o.long
	switch {
	case o.optionalArg:
		left += "[=" + o.arg + "]"
	case o.arg != "":
		left += " " + o.arg
	}
	return left
}

// OptionsHelp lists the options, one per line, for `corral submit --help`:
// the supported ones first, then those accepted but ignored.
func OptionsHelp() string {
	var b strings.Builder
	var ignored []string
	for _, o := range Options() {
		if o.Hidden {
			continue
		}
		if o.Ignored != "" {
			ignored = append(ignored, "--"+o.Long)
			continue
		}
		row := optionByName(o.Long)
		fmt.Fprintf(&b, "  %-32s %s\n", row.usage(), o.Help)
	}
	b.WriteString("\nAccepted for sbatch compatibility but ignored, with a warning:\n")
	line := " "
	for _, name := range ignored {
		if len(line)+1+len(name) > 78 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + name
	}
	b.WriteString(line + "\n")
	return b.String()
}

func optionByName(long string) *option {
	for i := range options {
		if options[i].long == long {
			return &options[i]
		}
	}
	return nil
}
