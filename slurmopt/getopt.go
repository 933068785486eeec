package slurmopt

import (
	"fmt"
	"sort"
	"strings"
)

// ArgKind says whether an option takes a value.
type ArgKind int

const (
	NoArg       ArgKind = iota
	RequiredArg         // -o FMT, -oFMT, --format FMT, --format=FMT
	// OptionalArg takes a value only when glued: -j123 or --jobs=123
	// (getopt's "::"); -j alone has none.
	OptionalArg
)

// Option is one option a command takes. Name identifies it in the
// result: the long name, or the short letter when it has no long name.
type Option struct {
	Short rune   // 0: no short form
	Long  string // "": no long form
	Arg   ArgKind
}

func (o Option) name() string {
	if o.Long != "" {
		return o.Long
	}
	return string(o.Short)
}

// Set is one option as given on the command line, in order.
type Set struct {
	Name     string // Option's long name (or its short letter)
	Value    string
	HasValue bool
}

// Result is a parsed command line.
type Result struct {
	Sets []Set
	Args []string // the arguments that are not options, in order
}

// Has reports whether the option named name was given.
func (r *Result) Has(name string) bool {
	for _, s := range r.Sets {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Last is the value of the last occurrence of name ("" if none).
func (r *Result) Last(name string) (string, bool) {
	v, ok := "", false
	for _, s := range r.Sets {
		if s.Name == name {
			v, ok = s.Value, true
		}
	}
	return v, ok
}

// All lists the values of every occurrence of name, in order.
func (r *Result) All(name string) []string {
	var out []string
	for _, s := range r.Sets {
		if s.Name == name && s.HasValue {
			out = append(out, s.Value)
		}
	}
	return out
}

// Error is a command-line mistake, worded as glibc's getopt words it
// ("unrecognized option '--foo'"). Slurm's commands print it after their
// name and follow it with a line pointing to --help.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Parse reads args (without the program name) against opts. With
// stopAtArg the first argument ends the options, as getopt's "+" does
// (sbatch: the words after the script are the script's).
func Parse(opts []Option, args []string, stopAtArg bool) (*Result, error) {
	r := &Result{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			r.Args = append(r.Args, args[i+1:]...)
			return r, nil
		case strings.HasPrefix(a, "--"):
			next, err := parseLong(opts, args, i, r)
			if err != nil {
				return nil, err
			}
			i = next
		case len(a) > 1 && a[0] == '-':
			next, err := parseShort(opts, args, i, r)
			if err != nil {
				return nil, err
			}
			i = next
		default:
			if stopAtArg {
				r.Args = append(r.Args, args[i:]...)
				return r, nil
			}
			r.Args = append(r.Args, a)
		}
	}
	return r, nil
}

// parseLong reads the long option at args[i] and returns the index of the
// last word it used.
func parseLong(opts []Option, args []string, i int, r *Result) (int, error) {
	word := args[i][2:]
	name, value, hasValue := strings.Cut(word, "=")
	o, err := lookupLong(opts, name)
	if err != nil {
		return i, err
	}
	switch o.Arg {
	case NoArg:
		if hasValue {
			return i, &Error{fmt.Sprintf("option '--%s' doesn't allow an argument", o.Long)}
		}
	case RequiredArg:
		if !hasValue {
			if i+1 >= len(args) {
				return i, &Error{fmt.Sprintf("option '--%s' requires an argument", o.Long)}
			}
			i++
			value, hasValue = args[i], true
		}
	}
	r.Sets = append(r.Sets, Set{Name: o.name(), Value: value, HasValue: hasValue})
	return i, nil
}

// lookupLong finds a long option by its name or, as getopt_long does, by
// a prefix of it that only one option has.
func lookupLong(opts []Option, name string) (Option, error) {
	var matches []Option
	for _, o := range opts {
		if o.Long == "" {
			continue
		}
		if o.Long == name {
			return o, nil
		}
		if name != "" && strings.HasPrefix(o.Long, name) {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 0:
		return Option{}, &Error{fmt.Sprintf("unrecognized option '--%s'", name)}
	case 1:
		return matches[0], nil
	}
	names := make([]string, len(matches))
	for k, m := range matches {
		names[k] = "'--" + m.Long + "'"
	}
	sort.Strings(names)
	return Option{}, &Error{fmt.Sprintf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))}
}

// parseShort reads a word of bundled short options (-hn, -o%i, -o %i)
// and returns the index of the last word it used.
func parseShort(opts []Option, args []string, i int, r *Result) (int, error) {
	word := args[i]
	for k := 1; k < len(word); k++ {
		c := rune(word[k])
		o, ok := lookupShort(opts, c)
		if !ok {
			return i, &Error{fmt.Sprintf("invalid option -- '%c'", c)}
		}
		rest := word[k+1:]
		switch {
		case o.Arg == NoArg:
			r.Sets = append(r.Sets, Set{Name: o.name()})
			continue
		case rest != "":
			r.Sets = append(r.Sets, Set{Name: o.name(), Value: rest, HasValue: true})
		case o.Arg == OptionalArg:
			r.Sets = append(r.Sets, Set{Name: o.name()})
		case i+1 < len(args):
			i++
			r.Sets = append(r.Sets, Set{Name: o.name(), Value: args[i], HasValue: true})
		default:
			return i, &Error{fmt.Sprintf("option requires an argument -- '%c'", c)}
		}
		return i, nil
	}
	return i, nil
}

func lookupShort(opts []Option, c rune) (Option, bool) {
	for _, o := range opts {
		if o.Short == c && c != 0 {
			return o, true
		}
	}
	return Option{}, false
}
