package ctld

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/authz"
	"github.com/corral-hpc/corral/ctld/fault"
)

// Body size limits: users send job scripts, nodes send event batches.
const (
	maxUserBody = authz.MaxUserBody
	maxNodeBody = 16 << 20
)

// httpStatus is the one place where a domain error's kind becomes an HTTP
// status code.
var httpStatus = [...]int{
	fault.Internal:        http.StatusInternalServerError,
	fault.Invalid:         http.StatusBadRequest,
	fault.NotFound:        http.StatusNotFound,
	fault.Forbidden:       http.StatusForbidden,
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.Conflict:        http.StatusConflict,
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.TooMany:         http.StatusTooManyRequests,
	fault.Unavailable:     http.StatusServiceUnavailable,
	fault.Upstream:        http.StatusBadGateway,
}

// answered is an error whose status was decided in HTTP terms already:
// a node's answer relayed to the user, or a connection refusal (connlimit
// writes those on the raw connection too). It is answered as it is.
type answered struct {
	code int
	msg  string
}

func (e *answered) Error() string { return e.msg }

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		body, _ = json.Marshal(api.Error{Error: "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}

// writeError answers with err as an api.Error, with its kind's status (or
// the one it was answered with): a plain error is a controller fault
// (500), not the caller's.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var a *answered
	if errors.As(err, &a) {
		code = a.code
	} else if k := fault.KindOf(err); int(k) < len(httpStatus) {
		code = httpStatus[k]
	}
	writeJSON(w, code, api.Error{Error: err.Error()})
}

// decodeBody reads exactly one JSON value from body into v. strict rejects
// unknown fields (the user plane: a misspelt option must not be ignored).
func decodeBody(body io.Reader, v any, strict bool) error {
	if strict {
		// Read first, to count lists before decoding them: a 4 MiB body of
		// 1.4 million empty strings decoded into 22 MB of string headers
		// before any check could refuse it (eight at once took ctld to 566 MB).
		data, err := io.ReadAll(body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return fault.Errorf(fault.TooLarge, "request body is larger than %d MiB", mbe.Limit>>20)
			}
			return fault.Errorf(fault.Invalid, "reading the request body: %v", err)
		}
		if err := checkListLengths(data); err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	dec := json.NewDecoder(body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return fault.Errorf(fault.TooLarge, "request body is larger than %d MiB", mbe.Limit>>20)
		case errors.Is(err, io.EOF):
			return fault.Errorf(fault.Invalid, "request body is empty: expected a JSON object")
		}
		return fault.Errorf(fault.Invalid, "bad request body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fault.Errorf(fault.TooLarge, "request body is larger than %d MiB", mbe.Limit>>20)
		}
		return fault.Errorf(fault.Invalid, "bad request body: unexpected data after the JSON object")
	}
	if strict {
		return checkSizes(v) // no string over 64 KiB, no list over 65,536 entries
	}
	return nil
}

// notFound answers requests no route matched.
func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, fault.Errorf(fault.NotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
}

// maxJSONDepth is encoding/json's own nesting limit; a body nested deeper
// is refused by the decoder anyway.
const maxJSONDepth = 10000

// checkListLengths refuses JSON whose arrays or objects hold more than
// api.MaxListEntries entries, by counting the commas at each level, in one
// pass that allocates nothing per entry. Malformed JSON passes: the
// decoder says what is wrong with it.
func checkListLengths(data []byte) error {
	var commas []int // per open array or object
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if len(commas) == maxJSONDepth {
				return fault.Errorf(fault.Invalid, "bad request body: nested more than %d deep", maxJSONDepth)
			}
			commas = append(commas, 0)
		case (c == ']' || c == '}') && len(commas) > 0:
			commas = commas[:len(commas)-1]
		case c == ',' && len(commas) > 0:
			if commas[len(commas)-1]++; commas[len(commas)-1] >= api.MaxListEntries {
				return fault.Errorf(fault.Invalid, "bad request body: a list has more than %d entries", api.MaxListEntries)
			}
		}
	}
	return nil
}

// checkSizes is api.CheckSizes as an invalid request: every user-plane body passes it.
func checkSizes(v any) error {
	if err := api.CheckSizes(v); err != nil {
		return fault.Errorf(fault.Invalid, "%v", err)
	}
	return nil
}
