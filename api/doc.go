// Package api holds the wire types shared by corral's controller (ctld), node
// daemons (noded) and command line, plus the clients that speak them.
//
// Two planes use these types:
//
//   - The user plane: the CLI talks HTTP/JSON to ctld over a Unix socket.
//     ctld learns the caller's uid and gid from the socket's peer credentials,
//     so no request body ever names its own identity (root may act for another
//     uid with SubmitRequest.OnBehalfOf).
//   - The node plane: ctld and noded talk HTTP/JSON over TCP. Every request
//     carries an HMAC of its method, path, time and body made with the
//     cluster key (see Sign and Verify); an unsigned or stale request changes
//     nothing. The TCP connections are TLS pinned to the cluster CA that
//     ctld creates (tls.go: LoadOrCreateCA, ClientTLS, NewNodeClientTLS).
//   - Remote users (a login node) reach ctld's TCP port with a one-use
//     Credential that the local noded signs for the uid the kernel reports
//     (credential.go; NewRemoteClient fetches one per request).
//
// Paths are versioned under /v1; docs/api.md lists every call. The types here
// are plain data: no behaviour beyond validation and formatting helpers, so
// every package can depend on api without pulling in daemons.
package api
