// Package authz is the user plane's authorization: who may call which
// route, how often, and how much one request may carry.
//
// It is data first. UserRoutes is the matrix (every route's least role
// and, for the docs and the matrix test, what the handler then checks per
// job); Bounds is what one request to each route may cost; NodeRoutes
// lists the node plane, where the cluster key is the only credential. A
// route missing from either table is refused, never served unchecked.
//
// A Gate applies them after the controller has established identity (the
// socket's peer credentials or a verified remote credential): the per-uid
// rate limit, then the route's role, then its bound (Admit: all three).
// The ownership checks the controller makes per job (MayView, MayAct,
// ...) live on the Gate too, so every rule about who may do what is in
// this package.
//
// A Gate's configuration is fixed when it is built. Its Limiter owns the
// token buckets behind its own mutex, a leaf lock: nothing else is taken
// while it is held. The user names come from a Directory the controller
// supplies; it must be safe for concurrent use.
package authz
