package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// localTerminal is srun's own terminal under --pty: raw while the step
// runs, so that every key (Ctrl-C, Ctrl-D, Ctrl-Z included) reaches task
// 0's terminal on the node, and put back as it was at the end.
type localTerminal struct {
	fd    int
	saved unix.Termios
}

// openLocalTerminal is in's terminal, or nil when in is no terminal (a
// pipe, a file): the task still gets a terminal on its node.
func openLocalTerminal(in io.Reader) *localTerminal {
	f, ok := in.(*os.File)
	if !ok {
		return nil
	}
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return nil
	}
	return &localTerminal{fd: int(f.Fd()), saved: *t}
}

// makeRaw sets what cfmakeraw(3) sets.
func (t *localTerminal) makeRaw() error {
	raw := t.saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(t.fd, unix.TCSETS, &raw)
}

func (t *localTerminal) restore() {
	_ = unix.IoctlSetTermios(t.fd, unix.TCSETS, &t.saved) // nothing better to do if the terminal is gone
}

// size is the terminal's rows and columns; ok is false when it has none
// (a terminal nobody sized).
func (t *localTerminal) size() (rows, cols uint16, ok bool) {
	ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ)
	if err != nil || ws.Row == 0 || ws.Col == 0 {
		return 0, 0, false
	}
	return ws.Row, ws.Col, true
}

// crlfWriter ends srun's own lines with CR LF while the terminal is raw
// (no output processing turns LF into CR LF then).
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
