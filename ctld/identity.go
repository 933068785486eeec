package ctld

import (
	"context"
	"fmt"
	"net"
	"os/user"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corral-hpc/corral/ctld/authz"
)

// peer is who is on the other end of a user-plane connection, as the
// kernel says (SO_PEERCRED). It is the only source of identity.
type peer struct {
	UID, GID uint32
	PID      int32
	// Role is set by authorize from corral.conf's access lines.
	Role authz.Role
}

type peerKey struct{}

// peerConnContext is http.Server.ConnContext for the user socket: it reads
// the peer's credentials once per connection.
func peerConnContext(ctx context.Context, c net.Conn) context.Context {
	if p, ok := peerOfConn(c); ok {
		return withPeer(ctx, p)
	}
	return ctx
}

// peerOfConn reads a Unix connection's peer credentials.
func peerOfConn(c net.Conn) (peer, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}, false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return peer{}, false
	}
	return peer{UID: cred.Uid, GID: cred.Gid, PID: cred.Pid}, true
}

func withPeer(ctx context.Context, p peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

func peerFrom(ctx context.Context) (peer, bool) {
	p, ok := ctx.Value(peerKey{}).(peer)
	return p, ok
}

// account is a uid resolved through the host's user database.
type account struct {
	UID    uint32
	GID    uint32 // primary group
	Name   string
	Home   string
	Groups []uint32 // supplementary groups, primary included
}

// accounts resolves uids with os/user and remembers answers briefly: a
// submit burst should not read /etc/passwd (or ask NSS) per request, and
// group changes still take effect within the TTL.
type accounts struct {
	ttl    time.Duration
	lookup func(uid uint32) (account, error)

	mu    sync.Mutex
	cache map[uint32]cachedAccount
}

type cachedAccount struct {
	acct account
	at   time.Time
}

func newAccounts() *accounts {
	return &accounts{ttl: 10 * time.Second, lookup: lookupAccount, cache: make(map[uint32]cachedAccount)}
}

// get resolves uid; an unknown uid is an error naming it.
func (a *accounts) get(uid uint32) (account, error) {
	now := time.Now()
	a.mu.Lock()
	c, ok := a.cache[uid]
	a.mu.Unlock()
	if ok && now.Sub(c.at) < a.ttl {
		return c.acct, nil
	}
	acct, err := a.lookup(uid)
	if err != nil {
		return account{}, err
	}
	a.mu.Lock()
	a.cache[uid] = cachedAccount{acct: acct, at: now}
	a.mu.Unlock()
	return acct, nil
}

// Name is uid's user name, or the number when it has no account.
func (a *accounts) Name(uid uint32) string { return a.name(uid) }

// name is uid's user name, or the number when it has no account.
func (a *accounts) name(uid uint32) string {
	if acct, err := a.get(uid); err == nil {
		return acct.Name
	}
	return strconv.FormatUint(uint64(uid), 10)
}

func lookupAccount(uid uint32) (account, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return account{}, fmt.Errorf("uid %d has no user account on the controller host", uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return account{}, fmt.Errorf("user %s has a non-numeric group id %q", u.Username, u.Gid)
	}
	acct := account{UID: uid, GID: uint32(gid), Name: u.Username, Home: u.HomeDir}
	gids, err := u.GroupIds()
	if err != nil {
		return account{}, fmt.Errorf("listing groups of user %s: %v", u.Username, err)
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			acct.Groups = append(acct.Groups, uint32(n))
		}
	}
	return acct, nil
}
