//go:build !slurmonly

package cli

import (
	"bufio"
	"io"
	"strings"
)

// indentJSON copies compact or loosely spaced JSON from r to w laid out as
// json.MarshalIndent(v, "", "  ") lays it out, plus a final newline,
// without holding the document: `corral queue --json` streams 100,000
// jobs (65 MB) through it. It does not validate: the input is the
// controller's answer, already checked to be a 200.
func indentJSON(w io.Writer, r io.Reader) error {
	in := bufio.NewReaderSize(r, 256<<10)
	out := bufio.NewWriterSize(w, 256<<10)
	var (
		inString, escaped bool
		depth             int
		open              byte // '{' or '[' just written, its line not yet broken
	)
	newline := func() {
		out.WriteByte('\n')
		out.WriteString(strings.Repeat("  ", depth))
	}
	for {
		c, err := in.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open != 0 {
			if open == '{' && c == '}' || open == '[' && c == ']' {
				open = 0
				depth--
				out.WriteByte(c) // {} and [] stay on one line
				continue
			}
			open = 0
			newline()
		}
		switch c {
		case '{', '[':
			out.WriteByte(c)
			depth++
			open = c
		case '}', ']':
			depth--
			newline()
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			newline()
		case ':':
			out.WriteString(": ")
		case '"':
			out.WriteByte(c)
			inString = true
		default:
			out.WriteByte(c)
		}
	}
	out.WriteByte('\n')
	return out.Flush()
}
