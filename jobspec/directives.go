package jobspec

import (
	"errors"
	"fmt"
	"strings"
)

// directivePrefixes start a directive line. #CORRAL is ours; #SBATCH keeps
// existing scripts working unchanged.
var directivePrefixes = []string{"#SBATCH", "#CORRAL"}

// LineError is a problem on one line of a script's directives.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// directive is one #SBATCH line, split into arguments.
type directive struct {
	line int
	args []string
}

// scan is what a script's header holds.
type scan struct {
	directives []directive
	// late are line numbers of directives after the first command, which
	// sbatch ignores; Parse warns about them.
	late []int
}

// ParseDirectives returns the arguments of the script's #SBATCH and #CORRAL
// lines, in order, as if they had been given on a command line. Directives
// are read until the first line that is neither blank nor a comment (the #!
// line is a comment); "##SBATCH" and an indented "#SBATCH" are comments.
// Arguments are split like a shell would (quotes, backslashes), and an
// unquoted word starting with # ends the line.
func ParseDirectives(script string) ([]string, error) {
	sc, err := scanDirectives(script)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, d := range sc.directives {
		args = append(args, d.args...)
	}
	return args, nil
}

func scanDirectives(script string) (scan, error) {
	var sc scan
	inHeader := true
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSuffix(line, "\r")
		rest, isDirective := directiveBody(line)
		if !inHeader {
			if isDirective {
				sc.late = append(sc.late, i+1)
			}
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case isDirective:
			args, err := splitWords(rest)
			if err != nil {
				return scan{}, &LineError{Line: i + 1, Err: err}
			}
			sc.directives = append(sc.directives, directive{line: i + 1, args: args})
		case trimmed == "" || trimmed[0] == '#':
			// blank line or comment: keep reading the header
		default:
			inHeader = false
		}
	}
	return sc, nil
}

// directiveBody reports whether line is a directive and returns what
// follows the prefix.
func directiveBody(line string) (string, bool) {
	for _, p := range directivePrefixes {
		rest, ok := strings.CutPrefix(line, p)
		if ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return rest, true
		}
	}
	return "", false
}

var errUnterminatedQuote = errors.New("unterminated quote in directive")

// splitWords splits a directive's text into words with POSIX shell quoting:
// '...' is literal, "..." allows \" \\ \$ and \` escapes, a backslash outside
// quotes escapes the next character. No expansion of any kind happens.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil // the rest of the line is a comment
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errUnterminatedQuote
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, errUnterminatedQuote
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
