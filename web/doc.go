// Package web is corral's dashboard: the sessions (jobs) of a user and
// the resources they hold, served to a browser by the controller.
//
// Who owns what:
//   - Package web owns the sign-in state, in memory only: one-time login
//     links (valid for a minute, usable once) and browser sessions (a
//     cookie bound to a uid, with its CSRF token). A controller restart
//     signs everyone out; nothing about the dashboard is persisted.
//   - It owns no job data. Every read and every action goes to the
//     controller's user plane through Controller.As(uid), a client acting
//     as the session's user, so the dashboard sees and may do exactly what
//     that user's `corral` commands may: the same gate, roles and
//     ownership checks.
//
// A login link is asked for over the controller's Unix socket (`corral
// dashboard`), whose peer credentials name the user: no password store.
// Behind a site's reverse proxy with its own sign-on, Config.TrustedHeader
// may name the user instead; it is off by default.
package web
