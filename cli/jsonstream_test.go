package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestIndentJSONMatchesMarshalIndent(t *testing.T) {
	docs := []string{
		`[]`, `{}`, `[{}]`, `[[],{},[[]]]`, `null`, `"s"`, `12.5e3`,
		`{"a":[],"b":{},"c":[1,2,{"d":null}],"e":true}`,
		`[{"name":"x,y:{z}[]","script":"#!/bin/sh\necho \"a\\\\\" \u00e9 \\\"]}"}]`,
		"[ {\"a\" : 1 ,\n\t\"b\" : [ 2 , 3 ] } ]",
	}
	// And what the controller really sends: its listing of the fixture jobs,
	// one element per line.
	var listing bytes.Buffer
	listing.WriteByte('[')
	for i, j := range fixtureJobs(time.Now()) {
		if i > 0 {
			listing.WriteByte(',')
		}
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		listing.Write(append(b, '\n'))
	}
	listing.WriteString("]\n")
	docs = append(docs, listing.String())
	for _, doc := range docs {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(strings.TrimSpace(doc)), "", "  "); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		want.WriteByte('\n')
		var got bytes.Buffer
		// One byte at a time: no state may depend on read boundaries.
		if err := indentJSON(&got, iotest.OneByteReader(strings.NewReader(doc))); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("indentJSON(%q) =\n%s\nwant\n%s", doc, got.String(), want.String())
		}
	}
}
