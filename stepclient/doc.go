// Package stepclient is srun's side of a step's I/O, shared by the two
// programs that play it: srun (package cli) and the dashboard's browser
// terminal (package web), in which the controller plays srun's part.
//
// A step's runners connect back to a port of the launching host and
// prove themselves with a Hello frame carrying the step's I/O token
// (package stepio). Listener owns that port, the token and the check.
// PTY is a whole one-task step on a pseudo-terminal (srun --jobid N
// --overlap --pty CMD) driven by a program rather than by srun's own
// terminal: it creates the step as the client's user, launches it on the
// job's first node, relays input, window sizes and output, and ends the
// step when closed.
//
// srun's many-node relay (signals, labels, PMI fences) stays in package
// cli; only what both need lives here.
package stepclient
