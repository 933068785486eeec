//go:build !slurmonly

package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// reorderArgs lets options follow arguments (`corral cancel 42 -u bob`),
// as getopt does for Slurm's commands, although urfave/cli stops reading
// options at the first argument. For the command being run it moves every
// option, with its value, in front of the positional arguments, splits
// glued short options (-ubob into -u bob) and spells each known option by
// its main name. `submit` is left alone: jobspec
// reads its sbatch syntax, where words after the script are the script's.
func reorderArgs(app *ucli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := []string{args[0]}
	flags, cmds := app.Flags, app.Commands
	rest := args[1:]
	for {
		var opts, positional []string
		var sub *ucli.Command
		i := 0
	scan:
		for ; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a == "--":
				positional = append(positional, rest[i:]...)
				i = len(rest)
				break scan
			case len(a) > 1 && a[0] == '-':
				name, value, glued := splitOption(flags, a)
				opts = append(opts, canonical(flags, name))
				if glued {
					opts = append(opts, value)
				} else if takesValue(flags, name) && !strings.Contains(a, "=") && i+1 < len(rest) {
					i++
					opts = append(opts, rest[i])
				}
			case len(positional) == 0 && findCommand(cmds, a) != nil:
				sub = findCommand(cmds, a)
				break scan
			default:
				positional = append(positional, a)
			}
		}
		out = append(out, opts...)
		if sub == nil {
			return append(out, positional...)
		}
		out = append(out, rest[i])
		rest = rest[i+1:]
		if sub.SkipFlagParsing {
			return append(out, rest...)
		}
		flags, cmds = sub.Flags, sub.Subcommands
	}
}

// canonical spells a known option by its main name (-u and --user=x
// become --user and --user=x), because urfave/cli refuses two spellings of
// one option in a command line while getopt takes them.
func canonical(flags []ucli.Flag, a string) string {
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	f := lookupFlag(flags, name)
	if f == nil {
		return a
	}
	out := "--" + f.Names()[0]
	if hasValue {
		out += "=" + value
	}
	return out
}

// splitOption turns "-ubob" into ("-u", "bob", true) when -u takes a value
// and "ubob" is no option of its own.
func splitOption(flags []ucli.Flag, a string) (string, string, bool) {
	if strings.HasPrefix(a, "--") || len(a) < 3 || strings.Contains(a, "=") {
		return a, "", false
	}
	if lookupFlag(flags, a[1:]) != nil || !takesValue(flags, a[:2]) {
		return a, "", false
	}
	return a[:2], a[2:], true
}

func lookupFlag(flags []ucli.Flag, name string) ucli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether option a ("-u", "--user=x") consumes a value.
// Unknown options take none: the parser will reject them anyway.
func takesValue(flags []ucli.Flag, a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	f := lookupFlag(flags, name)
	if f == nil {
		return false
	}
	_, isBool := f.(*ucli.BoolFlag)
	return !isBool
}

func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
