package pmi

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseV1(t *testing.T) {
	cases := []struct {
		line string
		want Message
		bad  bool
	}{
		{line: "cmd=init pmi_version=1 pmi_subversion=1", want: Message{Cmd: "init", Args: []KV{{"pmi_version", "1"}, {"pmi_subversion", "1"}}}},
		{line: "cmd=get_maxes", want: Message{Cmd: "get_maxes", Args: []KV{}}},
		{line: "cmd=put kvsname=1.0 key=bc-0 value=a=b", want: Message{Cmd: "put", Args: []KV{{"kvsname", "1.0"}, {"key", "bc-0"}, {"value", "a=b"}}}},
		{line: "  cmd=get  kvsname=k   key=x ", want: Message{Cmd: "get", Args: []KV{{"kvsname", "k"}, {"key", "x"}}}},
		{line: "cmd=put key=k value=", want: Message{Cmd: "put", Args: []KV{{"key", "k"}, {"value", ""}}}},
		// abort's message is free text: the rest of the line.
		{line: "cmd=abort exitcode=3 error_msg=application called MPI_Abort(comm, 3)", want: Message{Cmd: "abort", Args: []KV{{"exitcode", "3"}, {"error_msg", "application called MPI_Abort(comm, 3)"}}}},
		{line: "mcmd=spawn", want: Message{Cmd: "spawn", Args: []KV{}}},
		{line: "", bad: true},
		{line: "   ", bad: true},
		{line: "key=x cmd=get", bad: true},
		{line: "cmd=", bad: true},
		{line: "cmd=get garbage", bad: true},
		{line: "cmd=get =v", bad: true},
	}
	for _, c := range cases {
		got, err := ParseV1(c.line)
		if c.bad {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseV1(%q) = %+v, %v; want ErrSyntax", c.line, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseV1(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}

func TestFormatV1(t *testing.T) {
	got := FormatV1(Message{Cmd: "maxes", Args: []KV{{"rc", "0"}, {"kvsname_max", "256"}}})
	if got != "cmd=maxes rc=0 kvsname_max=256\n" {
		t.Errorf("FormatV1 = %q", got)
	}
}

func TestV2RoundTrip(t *testing.T) {
	m := Message{Cmd: "kvs-put", Args: []KV{{"key", "a;b"}, {"value", "x=y;;z"}, {"empty", ""}}}
	wire := FormatV2(m)
	want := "cmd=kvs-put;key=a;;b;value=x=y;;;;z;empty=;"
	if wire != fmt.Sprintf("%-6d", len(want))+want {
		t.Fatalf("FormatV2 = %q", wire)
	}
	got, err := ParseV2(wire[v2LenDigits:])
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("ParseV2(%q) = %+v, %v; want %+v", wire, got, err, m)
	}
	for _, bad := range []string{"", "cmd=x", "key=v;", "cmd=;", "=v;", "cmd=x;k;"} {
		if _, err := ParseV2(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseV2(%q): %v, want ErrSyntax", bad, err)
		}
	}
}

// FuzzParse checks that no input crashes either parser and that what
// parses formats back into the same message.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"cmd=init pmi_version=1 pmi_subversion=1", "cmd=put kvsname=k key=a value=b",
		"cmd=abort exitcode=1 error_msg=x y", "cmd=kvs-get;jobid=1.0;srcid=-1;key=k;", "cmd=a;b=c;;d;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := ParseV1(s); err == nil {
			if m.Cmd == "" {
				t.Fatalf("ParseV1(%q) accepted an empty cmd", s)
			}
			again, err := ParseV1(strings.TrimSuffix(FormatV1(m), "\n"))
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("ParseV1(%q) = %+v, but its format reads back as %+v, %v", s, m, again, err)
			}
		}
		if m, err := ParseV2(s); err == nil {
			again, err := ParseV2(FormatV2(m)[v2LenDigits:])
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("ParseV2(%q) = %+v, but its format reads back as %+v, %v", s, m, again, err)
			}
		}
	})
}
