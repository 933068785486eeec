package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// srun --multi-prog FILE: each task runs the program FILE gives its rank
// (srun(1), MULTIPLE PROGRAM CONFIGURATION). A line is a rank list (0,
// 1-3, 4,6, or * for every task no line before names) and the program
// with its arguments; %t in them is the task's rank, %o its offset in
// the line's ranks; # starts a comment. A task no line names fails.
//
// The tasks all start the same argv, so srun turns the file into a
// /bin/sh script that picks the task's line by $SLURM_PROCID and execs
// its program; the words are quoted as the file split them, so no shell
// expansion happens that Slurm's srun would not do.

// loadMultiProg replaces argv (the configuration file) with that script.
func (cfg *srunConfig) loadMultiProg() error {
	if len(cfg.argv) != 1 {
		return fmt.Errorf("--multi-prog takes one argument, its configuration file (got %d)", len(cfg.argv))
	}
	data, err := os.ReadFile(cfg.argv[0])
	if err != nil {
		return fmt.Errorf("--multi-prog: %v", err)
	}
	script, err := multiProgScript(cfg.argv[0], string(data))
	if err != nil {
		return err
	}
	if cfg.req.Name == "" {
		cfg.req.Name = filepath.Base(cfg.argv[0])
	}
	cfg.argv = []string{"/bin/sh", "-c", script, "multi-prog"}
	return nil
}

// multiProgScript is the sh script for configuration text conf (file
// names it in errors): one test a rank range, in the file's order.
func multiProgScript(file, conf string) (string, error) {
	var b strings.Builder
	lines := 0
	for n, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ranks, rest := line, ""
		if k := strings.IndexAny(line, " \t"); k >= 0 {
			ranks, rest = line[:k], line[k+1:]
		}
		words, err := splitWords(rest)
		if err != nil || len(words) == 0 {
			return "", fmt.Errorf("--multi-prog %s line %d: give the ranks, then the program and its arguments", file, n+1)
		}
		arms, err := rankArms(ranks)
		if err != nil {
			return "", fmt.Errorf("--multi-prog %s line %d: %v", file, n+1, err)
		}
		for _, a := range arms {
			b.WriteString(a.test)
			b.WriteString("exec")
			for _, w := range words {
				b.WriteByte(' ')
				b.WriteString(shellWord(w, a.offset))
			}
			if a.test != "" {
				b.WriteString("; fi")
			}
			b.WriteByte('\n')
		}
		lines++
	}
	if lines == 0 {
		return "", fmt.Errorf("--multi-prog %s names no program", file)
	}
	fmt.Fprintf(&b, "echo \"srun: error: --multi-prog %s has no line for task $SLURM_PROCID\" >&2\nexit 1\n", strings.NewReplacer("\"", "", "$", "", "`", "", "\\", "").Replace(file))
	return b.String(), nil
}

// rankArm is one rank range of a line: the sh test that picks it ("" for
// *, every task) and the shell expression of the task's offset within
// its line's ranks.
type rankArm struct{ test, offset string }

// rankArms reads a rank list: * , N, N-M, joined by commas.
func rankArms(list string) ([]rankArm, error) {
	if list == "*" {
		return []rankArm{{"", "$SLURM_PROCID"}}, nil
	}
	var arms []rankArm
	offset := 0
	for _, part := range strings.Split(list, ",") {
		a, b, ok := intRange(part) // sacctfilters.go
		if !ok {
			return nil, fmt.Errorf("bad rank list %q: use N, N-M, lists of them, or *", list)
		}
		test := fmt.Sprintf(`if [ "$SLURM_PROCID" -ge %d ] && [ "$SLURM_PROCID" -le %d ]; then `, a, b)
		arms = append(arms, rankArm{test, fmt.Sprintf("$((SLURM_PROCID - %d))", a-offset)})
		offset += b - a + 1
	}
	return arms, nil
}

// shellWord quotes w for sh, with %t the task's rank and %o offset.
func shellWord(w, offset string) string {
	var b strings.Builder
	lit := func(s string) {
		if s != "" {
			b.WriteString("'" + strings.ReplaceAll(s, "'", `'\''`) + "'")
		}
	}
	for {
		i := strings.IndexByte(w, '%')
		if i < 0 || i+1 >= len(w) {
			lit(w)
			break
		}
		switch w[i+1] {
		case 't':
			lit(w[:i])
			b.WriteString(`"$SLURM_PROCID"`)
		case 'o':
			lit(w[:i])
			b.WriteString(`"` + offset + `"`)
		default:
			lit(w[:i+2])
		}
		w = w[i+2:]
	}
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
}

// splitWords splits s at blanks outside single and double quotes, which
// it removes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote")
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
