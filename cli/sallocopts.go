package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corral-hpc/corral/jobspec"
)

// salloc's own options, which sbatch lacks (salloc(1)): salloc takes
// them out of its command line before package jobspec reads the rest
// (the job's options, shared with sbatch). --bell and --no-bell change
// nothing here; --kill-command, --x11 and --power are ignored with a
// warning;
// -I/--immediate[=SECONDS] gives up on an allocation not granted in
// time, as Slurm's does; --no-shell is refused: a corral allocation
// lives as long as its salloc.
type sallocOwn struct {
	immediate time.Duration // 0: wait as long as it takes
	warnings  []string
}

// sallocOwnOptions are those options: long name, short letter, whether
// they take an (attached, optional) value, and whether they need one
// (attached, or the next word).
var sallocOwnOptions = []struct {
	long         string
	short        byte
	value, needs bool
}{{"bell", 0, false, false}, {"no-bell", 0, false, false}, {"kill-command", 'K', true, false}, {"no-shell", 0, false, false},
	{"immediate", 'I', true, false}, {"x11", 0, true, false}, {"power", 0, true, true}}

// takeSallocOwn splits salloc's own options out of args, which it
// returns without them, up to and with the command.
func takeSallocOwn(args []string) (own sallocOwn, rest []string, err error) {
	jobOpts := jobspec.Options()
	takesValue := func(long string, short byte) bool { // a job option's separate value
		var found []jobspec.Option // an exact name, or every option a prefix names
		for _, o := range jobOpts {
			switch {
			case short != 0 && o.Short == short, long != "" && o.Long == long:
				return o.Arg != "" && !o.OptionalArg
			case long != "" && strings.HasPrefix(o.Long, long):
				found = append(found, o)
			}
		}
		return len(found) == 1 && found[0].Arg != "" && !found[0].OptionalArg // else jobspec says what is wrong
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			return own, append(rest, args[i:]...), nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			if !hasValue && sallocOwnNeedsValue(name) {
				if i+1 == len(args) {
					return own, nil, fmt.Errorf("option --%s requires an argument", name)
				}
				i++
				value, hasValue = args[i], true
			}
			if ok, err := own.take(name, value, hasValue); ok || err != nil {
				if err != nil {
					return own, nil, err
				}
				continue
			}
			rest = append(rest, a)
			if !hasValue && takesValue(name, 0) && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
		default: // -abc: flags, then at most one option taking the rest (or the next word) as its value
			kept := []byte{'-'}
			for j := 1; j < len(a); j++ {
				c := a[j]
				if name := sallocOwnShort(c); name != "" { // -I, -K: the rest is their value
					if _, err := own.take(name, a[j+1:], j+1 < len(a)); err != nil {
						return own, nil, err
					}
					break
				}
				kept = append(kept, c)
				if takesValue("", c) {
					kept = append(kept, a[j+1:]...)
					if j+1 == len(a) && i+1 < len(args) { // the value is the next word
						i++
						rest = append(rest, string(kept), args[i])
						kept = nil
					}
					break
				}
			}
			if len(kept) > 1 {
				rest = append(rest, string(kept))
			}
		}
	}
	return own, rest, nil
}

func sallocOwnNeedsValue(long string) bool {
	for _, o := range sallocOwnOptions {
		if o.long == long {
			return o.needs
		}
	}
	return false
}

func sallocOwnShort(c byte) string {
	for _, o := range sallocOwnOptions {
		if o.short == c && c != 0 {
			return o.long
		}
	}
	return ""
}

// take applies option name if it is one of salloc's own.
func (own *sallocOwn) take(name, value string, hasValue bool) (bool, error) {
	for _, o := range sallocOwnOptions {
		if o.long != name {
			continue
		}
		if hasValue && !o.value {
			return true, fmt.Errorf("option --%s takes no value", name)
		}
		switch name {
		case "no-shell":
			return true, errors.New("--no-shell is not supported: a corral allocation lives as long as its salloc; give salloc the command, or submit sbatch --wrap 'sleep infinity' and run srun --jobid=ID in it")
		case "kill-command":
			own.warnings = append(own.warnings, "--kill-command is ignored: corral's salloc sends its command no signal of its own when the allocation ends")
		case "x11":
			own.warnings = append(own.warnings, "--x11 is ignored: corral does not forward X11")
		case "power":
			own.warnings = append(own.warnings, "--power is ignored: corral has no power options")
		case "immediate":
			var err error
			if own.immediate, err = immediateWait(value, hasValue); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}

// atFirstLook is -I without seconds: give up at the first answer that
// the resources are not free.
const atFirstLook = time.Nanosecond

// immediateWait reads -I/--immediate[=SECONDS], as salloc and srun take
// it: how long to wait for resources before giving up.
func immediateWait(value string, hasValue bool) (time.Duration, error) {
	if !hasValue {
		return atFirstLook, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid --immediate %q: give seconds", value)
	}
	if n == 0 {
		return atFirstLook, nil
	}
	return time.Duration(n) * time.Second, nil
}
