package stepio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	frames := []Frame{
		HelloFrame("tok", "dev1"),
		{Kind: Stdout, Task: 3, Payload: []byte("hello\n")},
		{Kind: Stderr, Task: 0, Payload: []byte("oops")},
		ExitFrame(3, ExitStatus{Code: 130, Signal: 2}),
		{Kind: Stdin, Task: 0}, // EOF
		{Kind: Signal, Task: AllTasks, Payload: []byte{15}},
		WinsizeFrame(0, 40, 120),
		{Kind: Done, Task: AllTasks},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, f := range frames {
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range frames {
		got, err := Read(&buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.Kind != want.Kind || got.Task != want.Task || !bytes.Equal(got.Payload, want.Payload) {
			t.Fatalf("frame %d: got %+v, want %+v", i, got, want)
		}
	}
	if _, err := Read(&buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestPayloadHelpers(t *testing.T) {
	tok, node, err := ParseHello(HelloFrame("secret", "dev2").Payload)
	if err != nil || tok != "secret" || node != "dev2" {
		t.Fatalf("ParseHello = %q %q %v", tok, node, err)
	}
	if _, _, err := ParseHello([]byte("no-nul")); !errors.Is(err, ErrFrame) {
		t.Fatalf("ParseHello without NUL: %v", err)
	}
	e, err := DecodeExit(ExitFrame(1, ExitStatus{Code: -1, Signal: 9}).Payload)
	if err != nil || e.Code != -1 || e.Signal != 9 {
		t.Fatalf("DecodeExit = %+v %v", e, err)
	}
	if _, err := DecodeExit([]byte{1}); !errors.Is(err, ErrFrame) {
		t.Fatalf("short exit payload: %v", err)
	}
	r, c, err := DecodeWinsize(WinsizeFrame(0, 24, 80).Payload)
	if err != nil || r != 24 || c != 80 {
		t.Fatalf("DecodeWinsize = %d %d %v", r, c, err)
	}
}

func TestLongWritesSplit(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	data := strings.Repeat("x", 2*MaxPayload+5)
	if n, err := io.WriteString(w.TaskWriter(Stdout, 7), data); err != nil || n != len(data) {
		t.Fatalf("write: %d %v", n, err)
	}
	var got []byte
	frames := 0
	for {
		f, err := Read(&buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind != Stdout || f.Task != 7 || len(f.Payload) > MaxPayload {
			t.Fatalf("frame %+v", f.Kind)
		}
		frames++
		got = append(got, f.Payload...)
	}
	if frames != 3 || string(got) != data {
		t.Fatalf("%d frames, %d bytes; want 3 frames, %d bytes", frames, len(got), len(data))
	}
}

func TestMalformed(t *testing.T) {
	for name, raw := range map[string][]byte{
		"unknown kind": {'?', 0, 0, 0, 0, 0, 0, 0, 0},
		"oversized":    {'O', 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := Read(bytes.NewReader(raw)); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
	}
	if _, err := Read(bytes.NewReader([]byte{'O', 0, 0, 0, 0, 0, 0, 0, 4, 'a'})); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated payload: %v", err)
	}
}

func TestDoneFrame(t *testing.T) {
	for _, n := range []int64{0, 1, 3} {
		f := DoneFrame(n)
		if f.Kind != Done || f.Task != AllTasks {
			t.Errorf("DoneFrame(%d) = %+v", n, f)
		}
		var buf bytes.Buffer
		if err := NewWriter(&buf).Write(f); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DecodeDone(back.Payload); err != nil || got != n {
			t.Errorf("DecodeDone(DoneFrame(%d)) = %d, %v", n, got, err)
		}
	}
	if len(DoneFrame(0).Payload) != 0 {
		t.Error("a Done without OOM kills has a payload: an older srun would still read it, but it need not")
	}
	for _, p := range [][]byte{{1}, make([]byte, 9), {0x80, 0, 0, 0, 0, 0, 0, 0}} {
		if _, err := DecodeDone(p); !errors.Is(err, ErrFrame) {
			t.Errorf("DecodeDone(%v): %v, want ErrFrame", p, err)
		}
	}
}
