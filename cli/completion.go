//go:build !slurmonly

package cli

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/corral-hpc/corral/jobspec"
)

// Shell completion is generated, not hand-written: the scripts are printed
// from the same command and option tables the parser uses, so that a new
// option completes as soon as it exists. Both scripts are static (they do
// not call corral while completing), so completing never contacts the
// controller.

func completionCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "completion",
		Usage: "print a shell completion script (bash or zsh)",
		UsageText: "corral completion bash   # then: source <(corral completion bash)\n" +
			"   corral completion zsh    # then: corral completion zsh > \"${fpath[1]}/_corral\"",
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("give one shell: bash or zsh (got %d arguments)", c.NArg())
			}
			// A fresh app: the running one has urfave's help command and
			// flags mixed in.
			cmds := completionTree(App())
			switch shell := c.Args().First(); shell {
			case "bash":
				return writeBashCompletion(out(c), cmds)
			case "zsh":
				return writeZshCompletion(out(c), cmds)
			default:
				return usageErrorf("unknown shell %q: use bash or zsh", shell)
			}
		},
	}
}

// compCommand is one command as completion sees it.
type compCommand struct {
	path  string // "" for corral itself, "show job" for a subcommand
	usage string
	opts  []compOption
	subs  []*compCommand
	// args is what the command's other words are: "files", "none" or a
	// list of words.
	args []string
}

// compOption is one option of a command.
type compOption struct {
	names    []string // "-c", "--cpus-per-task"
	help     string
	arg      string // value placeholder; "" for a flag
	optional bool   // the value must be attached (--nice=5)
	repeat   bool   // may be given more than once
	file     bool   // the value is a path
	dir      bool   // the value is a directory
	values   []string
}

func (o compOption) takesValue() bool { return o.arg != "" }

// completionTree describes app's visible commands and their options.
func completionTree(app *ucli.App) *compCommand {
	top := &compCommand{usage: app.Usage, opts: flagOptions(app.Flags), args: []string{"none"}}
	top.opts = append(top.opts, helpOption())
	for _, c := range app.Commands {
		if !c.Hidden && c.Name != "help" {
			top.subs = append(top.subs, commandTree(c, c.Name))
		}
	}
	return top
}

func commandTree(c *ucli.Command, path string) *compCommand {
	// Only a script and a shell name complete; job IDs and the like do not.
	cc := &compCommand{path: path, usage: c.Usage, args: []string{"none"}}
	switch path {
	case "submit":
		cc.opts, cc.args = submitOptions(), []string{"files"}
	case "completion":
		cc.args = []string{"bash", "zsh"}
	default:
		cc.opts = flagOptions(c.Flags)
	}
	if !c.HideHelp {
		cc.opts = append(cc.opts, helpOption())
	}
	for _, sub := range c.Subcommands {
		if !sub.Hidden && sub.Name != "help" {
			cc.subs = append(cc.subs, commandTree(sub, path+" "+sub.Name))
		}
	}
	return cc
}

func helpOption() compOption {
	return compOption{names: []string{"-h", "--help"}, help: "show help"}
}

// flagOptions describes urfave/cli flags.
func flagOptions(flags []ucli.Flag) []compOption {
	var out []compOption
	for _, f := range flags {
		df, ok := f.(ucli.DocGenerationFlag)
		if !ok {
			continue
		}
		if vf, ok := f.(ucli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		o := compOption{help: df.GetUsage()}
		for _, n := range f.Names() {
			o.names = append(o.names, dashes(n))
		}
		if df.TakesValue() {
			o.arg = "VALUE"
		}
		switch f := f.(type) {
		case *ucli.StringFlag:
			o.file = f.TakesFile
		case *ucli.PathFlag:
			o.file = true
		case *ucli.StringSliceFlag:
			o.repeat = true
		}
		sortNames(o.names)
		out = append(out, o)
	}
	return out
}

// submitOptions describes `corral submit`'s options, from jobspec's table.
func submitOptions() []compOption {
	var out []compOption
	for _, o := range jobspec.Options() {
		if o.Hidden {
			continue
		}
		co := compOption{names: []string{"--" + o.Long}, help: o.Help, arg: o.Arg, optional: o.OptionalArg,
			values: o.Values, repeat: o.Long == "mount" || o.Long == "app"}
		if o.Short != 0 {
			co.names = append([]string{"-" + string(o.Short)}, co.names...)
		}
		if o.Ignored != "" {
			co.help = "ignored: " + o.Ignored
		}
		switch o.Long {
		case "output", "error", "input", "socket":
			co.file = true
		case "chdir":
			co.dir = true
		}
		out = append(out, co)
	}
	return out
}

// sortNames puts short names before long ones.
func sortNames(names []string) {
	sort.SliceStable(names, func(a, b int) bool { return len(names[a]) < len(names[b]) })
}

// all lists cmd and every command below it, depth first.
func (c *compCommand) all() []*compCommand {
	out := []*compCommand{c}
	for _, s := range c.subs {
		out = append(out, s.all()...)
	}
	return out
}

func (c *compCommand) name() string {
	if i := strings.LastIndexByte(c.path, ' '); i >= 0 {
		return c.path[i+1:]
	}
	return c.path
}

// ---- bash ----

func writeBashCompletion(w io.Writer, top *compCommand) error {
	var b strings.Builder
	b.WriteString(bashHeader)
	table := func(name string, value func(c *compCommand) string) {
		fmt.Fprintf(&b, "_corral_%s=(\n", name)
		for _, c := range top.all() {
			if v := value(c); v != "" {
				fmt.Fprintf(&b, "  [%s]=%s\n", bashQuote(bashKey(c.path)), bashQuote(v))
			}
		}
		b.WriteString(")\n")
	}
	optNames := func(c *compCommand, keep func(compOption) bool) string {
		var names []string
		for _, o := range c.opts {
			if keep(o) {
				names = append(names, o.names...)
			}
		}
		if len(names) == 0 {
			return ""
		}
		return " " + strings.Join(names, " ") + " "
	}
	table("subs", func(c *compCommand) string {
		var names []string
		for _, s := range c.subs {
			names = append(names, s.name())
		}
		return strings.Join(names, " ")
	})
	table("opts", func(c *compCommand) string {
		return strings.TrimSpace(optNames(c, func(o compOption) bool { return true }))
	})
	table("valued", func(c *compCommand) string {
		return optNames(c, func(o compOption) bool { return o.takesValue() && !o.optional })
	})
	table("files", func(c *compCommand) string { return optNames(c, func(o compOption) bool { return o.file }) })
	table("dirs", func(c *compCommand) string { return optNames(c, func(o compOption) bool { return o.dir }) })
	table("args", func(c *compCommand) string {
		if slices.Equal(c.args, []string{"files"}) {
			return ""
		}
		return strings.Join(c.args, " ")
	})
	b.WriteString("_corral_values=(\n")
	for _, c := range top.all() {
		for _, o := range c.opts {
			for _, n := range o.names {
				if len(o.values) > 0 {
					fmt.Fprintf(&b, "  [%s]=%s\n", bashQuote(bashKey(c.path)+" "+n), bashQuote(strings.Join(o.values, " ")))
				}
			}
		}
	}
	b.WriteString(")\n")
	b.WriteString(bashFunction)
	_, err := io.WriteString(w, b.String())
	return err
}

// bashKey is a command's key in the tables: bash refuses "" as a key.
func bashKey(path string) string { return strings.TrimSpace("corral " + path) }

// bashQuote quotes s for a bash script.
func bashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const bashHeader = `# bash completion for corral, generated by "corral completion bash".
# Load it now:   source <(corral completion bash)
# or for good:   corral completion bash > /etc/bash_completion.d/corral
#
# Tables by command path ("corral", "corral submit"): subcommands, options,
# options taking a value, options whose value is a file or a directory,
# what other words are ("none", or a word list), and the values an
# option may take.
declare -gA _corral_subs _corral_opts _corral_valued _corral_files _corral_dirs _corral_args _corral_values
`

const bashFunction = `
_corral() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} eq=0
    # bash splits --opt=value at "=": put it back together.
    if [[ $cur == "=" ]]; then
        cur="" eq=1
    elif [[ $prev == "=" ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]} eq=1
    fi
    # Find the command: words that are neither options nor their values.
    local path=corral i w skip=0 args=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if ((skip)); then
            skip=0
            continue
        fi
        case $w in
        =) skip=1 ;;
        -*) [[ ${_corral_valued[$path]} == *" $w "* && ${COMP_WORDS[i+1]} != "=" ]] && skip=1 ;;
        *)
            if ((args == 0)) && [[ " ${_corral_subs[$path]} " == *" $w "* ]]; then
                path="$path $w"
            else
                args=1
            fi
            ;;
        esac
    done
    COMPREPLY=()
    if [[ $path == "corral submit" ]] && ((args)); then
        return # the script's own arguments
    fi
    if ((eq)) || [[ $prev == -* && ${_corral_valued[$path]} == *" $prev "* ]]; then
        local key="$path $prev"
        if [[ -n ${_corral_values[$key]} ]]; then
            COMPREPLY=($(compgen -W "${_corral_values[$key]}" -- "$cur"))
        elif [[ ${_corral_dirs[$path]} == *" $prev "* ]]; then
            COMPREPLY=($(compgen -d -- "$cur"))
        elif [[ ${_corral_files[$path]} == *" $prev "* ]]; then
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "${_corral_opts[$path]}" -- "$cur"))
        [[ ${#COMPREPLY[@]} == 1 && ${_corral_valued[$path]} == *" ${COMPREPLY[0]} "* && $cur == --* ]] && compopt -o nospace 2>/dev/null && COMPREPLY[0]+="="
        return
    fi
    if ((args == 0)) && [[ -n ${_corral_subs[$path]} ]]; then
        COMPREPLY=($(compgen -W "${_corral_subs[$path]}" -- "$cur"))
        return
    fi
    case ${_corral_args[$path]} in
    none) ;;
    "") COMPREPLY=($(compgen -f -- "$cur")) ;;
    *) ((args)) || COMPREPLY=($(compgen -W "${_corral_args[$path]}" -- "$cur")) ;;
    esac
}
complete -o bashdefault -o default -F _corral corral
`

// ---- zsh ----

func writeZshCompletion(w io.Writer, top *compCommand) error {
	var b strings.Builder
	b.WriteString("#compdef corral\n" +
		"# zsh completion for corral, generated by \"corral completion zsh\".\n" +
		"# Install it:  corral completion zsh > \"${fpath[1]}/_corral\"\n" +
		"# or load now: source <(corral completion zsh)\n\n")
	for _, c := range top.all() {
		writeZshFunction(&b, c)
	}
	b.WriteString("if [[ $funcstack[1] == _corral ]]; then\n  _corral \"$@\"\nelse\n  compdef _corral corral\nfi\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func zshFuncName(c *compCommand) string {
	if c.path == "" {
		return "_corral"
	}
	return "_corral_" + strings.NewReplacer(" ", "_", "-", "_").Replace(c.path)
}

func writeZshFunction(b *strings.Builder, c *compCommand) {
	fmt.Fprintf(b, "%s() {\n", zshFuncName(c))
	var specs []string
	for _, o := range c.opts {
		specs = append(specs, zshOptionSpecs(o)...)
	}
	switch {
	case len(c.subs) > 0:
		b.WriteString("  local curcontext=$curcontext state line\n  typeset -A opt_args\n")
		specs = append(specs, "'1:command:->command'", "'*::argument:->argument'")
		fmt.Fprintf(b, "  _arguments -C -s \\\n    %s\n", strings.Join(specs, " \\\n    "))
		b.WriteString("  case $state in\n  command)\n    local -a commands=(\n")
		for _, s := range c.subs {
			fmt.Fprintf(b, "      %s\n", zshQuote(s.name()+":"+s.usage))
		}
		b.WriteString("    )\n    _describe -t commands 'corral command' commands\n    ;;\n  argument)\n    case $words[1] in\n")
		for _, s := range c.subs {
			fmt.Fprintf(b, "    %s) %s ;;\n", s.name(), zshFuncName(s))
		}
		b.WriteString("    esac\n    ;;\n  esac\n}\n\n")
		return
	case c.path == "submit":
		specs = append(specs, "'1:script:_files'", "'*::script argument:_files'")
	case slices.Equal(c.args, []string{"files"}):
		specs = append(specs, "'*:file:_files'")
	case !slices.Equal(c.args, []string{"none"}):
		specs = append(specs, zshQuote("1:"+c.name()+":("+strings.Join(c.args, " ")+")"))
	}
	fmt.Fprintf(b, "  _arguments -s -S \\\n    %s\n}\n\n", strings.Join(specs, " \\\n    "))
}

// zshOptionSpecs writes one option in _arguments' syntax:
// '(-c --cpus-per-task)'{-c+,--cpus-per-task=}'[help]:N:action'.
func zshOptionSpecs(o compOption) []string {
	desc := "[" + zshEscape(o.help) + "]"
	action := ""
	switch {
	case len(o.values) > 0:
		action = "(" + strings.Join(o.values, " ") + ")"
	case o.dir:
		action = "_directories"
	case o.file:
		action = "_files"
	}
	value := ""
	if o.takesValue() {
		colon := ":"
		if o.optional {
			colon = "::"
		}
		value = colon + zshEscape(o.arg) + ":" + action
	}
	var forms []string
	for _, n := range o.names {
		switch {
		case !o.takesValue():
			forms = append(forms, n)
		case o.optional && strings.HasPrefix(n, "--"):
			forms = append(forms, n+"=-")
		case o.optional:
			forms = append(forms, n+"-")
		case strings.HasPrefix(n, "--"):
			forms = append(forms, n+"=")
		default:
			forms = append(forms, n+"+")
		}
	}
	excl := "(" + strings.Join(o.names, " ") + ")"
	if o.repeat {
		excl = "*"
	}
	if len(forms) == 1 {
		return []string{zshQuote(excl + forms[0] + desc + value)}
	}
	// Brace expansion gives each spelling its own spec; names need no quotes.
	return []string{zshQuote(excl) + "{" + strings.Join(forms, ",") + "}" + zshQuote(desc+value)}
}

// zshEscape protects the characters _arguments gives a meaning to inside
// a description or placeholder.
func zshEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

// zshQuote quotes s for a zsh script.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
