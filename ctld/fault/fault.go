package fault

import (
	"errors"
	"fmt"
)

// Kind says whose problem an error is.
type Kind uint8

// The kinds, by the caller's next step: fix the request (Invalid,
// TooLarge), ask about something else (NotFound), ask as someone else
// (Forbidden, Unauthenticated), wait and retry (Conflict, TooMany,
// Unavailable, Upstream), or report a bug (Internal).
const (
	Internal        Kind = iota // the controller's own fault
	Invalid                     // the request is malformed or breaks a rule
	NotFound                    // what it names does not exist
	Forbidden                   // the caller may not do this
	Unauthenticated             // the caller could not be identified
	Conflict                    // the target's present state refuses it
	TooLarge                    // the request is larger than allowed
	TooMany                     // the caller is over its rate
	Unavailable                 // the controller cannot serve it now
	Upstream                    // a node or other service failed it
)

var names = [...]string{"internal", "invalid", "not found", "forbidden", "unauthenticated",
	"conflict", "too large", "too many requests", "unavailable", "upstream"}

// Error makes a Kind a sentinel: errors.Is(err, NotFound).
func (k Kind) Error() string {
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("fault kind %d", k)
}

// Error is a domain error: its message is what the caller is told.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports e's kind as a sentinel.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Errorf is a domain error of kind k.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// KindOf is err's kind; Internal when err carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
