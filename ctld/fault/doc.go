// Package fault is the controller's domain errors: a few kinds (not found,
// forbidden, conflict, invalid, ...) that say whose problem an error is,
// never how it is answered. Domain code returns them; the HTTP layer maps
// each kind to a status code in one place, so the rules can be tested
// without a server and the same error can later be answered over another
// transport.
//
// A Kind is itself an error, so errors.Is(err, fault.NotFound) asks an
// error's kind the way bbolt's sentinel errors are asked. An error without
// a kind is the controller's own fault (Internal).
package fault
