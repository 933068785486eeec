package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxLine bounds one command on the wire, either version: a longer one is
// refused, so that a task cannot make its node's runner hold unbounded
// memory.
const MaxLine = 64 << 10

// ErrSyntax is a line or message that is not the protocol's.
var ErrSyntax = errors.New("pmi: malformed command")

// Message is one command or response: its cmd and its other keys, in
// order.
type Message struct {
	Cmd  string
	Args []KV
}

// KV is one key=value of a message.
type KV struct{ Key, Value string }

// Get is the value of key and whether it was given.
func (m Message) Get(key string) (string, bool) {
	for _, kv := range m.Args {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// ParseV1 reads one PMI-1 line (without its newline): space-separated
// key=value pairs, the first of them cmd= (or mcmd=, the spawn command).
// A value ends at the next space, except error_msg's, which is the rest
// of the line: abort's message is free text.
func ParseV1(line string) (Message, error) {
	var m Message
	rest := strings.TrimLeft(line, " ")
	for rest != "" {
		k, after, ok := strings.Cut(rest, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return Message{}, fmt.Errorf("%w: %q", ErrSyntax, clip(line))
		}
		v := after
		if k == "error_msg" {
			rest = ""
		} else if i := strings.IndexByte(after, ' '); i >= 0 {
			v, rest = after[:i], strings.TrimLeft(after[i+1:], " ")
		} else {
			rest = ""
		}
		if m.Cmd == "" && m.Args == nil {
			if k != "cmd" && k != "mcmd" {
				return Message{}, fmt.Errorf("%w: %q does not start with cmd=", ErrSyntax, clip(line))
			}
			if v == "" {
				return Message{}, fmt.Errorf("%w: empty cmd", ErrSyntax)
			}
			m.Cmd = v
			m.Args = []KV{}
			continue
		}
		m.Args = append(m.Args, KV{k, v})
	}
	if m.Cmd == "" {
		return Message{}, fmt.Errorf("%w: empty line", ErrSyntax)
	}
	return m, nil
}

// FormatV1 is m as a PMI-1 line with its newline.
func FormatV1(m Message) string {
	var b strings.Builder
	b.WriteString("cmd=")
	b.WriteString(m.Cmd)
	for _, kv := range m.Args {
		b.WriteByte(' ')
		b.WriteString(kv.Key)
		b.WriteByte('=')
		b.WriteString(kv.Value)
	}
	b.WriteByte('\n')
	return b.String()
}

// v2LenDigits is the width of PMI-2's length prefix: six characters,
// space-padded decimal, then that many bytes of message.
const v2LenDigits = 6

// ParseV2 reads one PMI-2 message body (after its length prefix):
// key=value pairs, each ended by ';', the first cmd=. A ';' inside a
// value is written ";;".
func ParseV2(body string) (Message, error) {
	var m Message
	i := 0
	for i < len(body) {
		eq := strings.IndexByte(body[i:], '=')
		if eq <= 0 {
			return Message{}, fmt.Errorf("%w: %q", ErrSyntax, clip(body))
		}
		k := body[i : i+eq]
		if strings.ContainsAny(k, ";") {
			return Message{}, fmt.Errorf("%w: %q", ErrSyntax, clip(body))
		}
		i += eq + 1
		var v strings.Builder
		for {
			if i >= len(body) {
				return Message{}, fmt.Errorf("%w: %q: a value without its ';'", ErrSyntax, clip(body))
			}
			if body[i] == ';' {
				if i+1 < len(body) && body[i+1] == ';' {
					v.WriteByte(';')
					i += 2
					continue
				}
				i++
				break
			}
			v.WriteByte(body[i])
			i++
		}
		if m.Cmd == "" && m.Args == nil {
			if k != "cmd" || v.Len() == 0 {
				return Message{}, fmt.Errorf("%w: %q does not start with cmd=", ErrSyntax, clip(body))
			}
			m.Cmd, m.Args = v.String(), []KV{}
			continue
		}
		m.Args = append(m.Args, KV{k, v.String()})
	}
	if m.Cmd == "" {
		return Message{}, fmt.Errorf("%w: empty message", ErrSyntax)
	}
	return m, nil
}

// FormatV2 is m as a PMI-2 message with its length prefix.
func FormatV2(m Message) string {
	var b strings.Builder
	put := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strings.ReplaceAll(v, ";", ";;"))
		b.WriteByte(';')
	}
	put("cmd", m.Cmd)
	for _, kv := range m.Args {
		put(kv.Key, kv.Value)
	}
	return fmt.Sprintf("%-*d", v2LenDigits, b.Len()) + b.String()
}

// reader reads either version's commands from one rank's connection.
type reader struct{ r *bufio.Reader }

func newReader(r io.Reader) *reader { return &reader{r: bufio.NewReaderSize(r, 4096)} }

// lineV1 reads one newline-ended line, at most MaxLine bytes.
func (r *reader) lineV1() (string, error) {
	var b []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxLine {
			return "", fmt.Errorf("%w: a line longer than %d bytes", ErrSyntax, MaxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

// messageV2 reads one length-prefixed PMI-2 message body.
func (r *reader) messageV2() (string, error) {
	var h [v2LenDigits]byte
	if _, err := io.ReadFull(r.r, h[:]); err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(h[:])))
	if err != nil || n < 0 || n > MaxLine {
		return "", fmt.Errorf("%w: length prefix %q", ErrSyntax, h[:])
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	return string(body), nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
