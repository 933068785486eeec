package noded

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
)

// maxJobRequest bounds a request body a job sends through its socket, as
// ctld bounds a user's.
const maxJobRequest = 4 << 20

// forwarder passes a job's requests to ctld's user plane over TCP as the
// job's user: each request carries a remote credential (api.Credential)
// that noded mints for the job's uid, gid and groups, never the
// caller's say, with the job's ID for ctld's log. It is the credential a
// user on this host gets from the credential socket, so ctld applies the
// same checks and bounds as to any remote user; what is new is only
// who vouches: the job socket's peer check instead of SO_PEERCRED alone.
type forwarder struct {
	job      uint64
	uid, gid uint32
	groups   []uint32
	node     string
	key      []byte
	proxy    *httputil.ReverseProxy
}

func (d *Daemon) newForwarder(id uint64, uid, gid uint32, groups []uint32) (*forwarder, error) {
	base, err := url.Parse(d.cfg.CtldURL)
	if err != nil {
		return nil, err
	}
	fw := &forwarder{job: id, uid: uid, gid: gid, groups: groups, node: d.cfg.Name, key: d.cfg.Key}
	tr := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, TLSClientConfig: d.ctldTLS}
	fw.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
			pr.Out.Host = base.Host
		},
		Transport:     tr,
		FlushInterval: -1, // streamed answers (waits, event lists) go out as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, http.StatusBadGateway, fmt.Sprintf("corral-noded could not reach the controller at %s: %v", d.cfg.CtldURL, err))
		},
		ErrorLog: d.log,
	}
	return fw, nil
}

func (fw *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/node/") {
		writeError(w, http.StatusForbidden, "corral-noded: a job's socket reaches the user plane only")
		return
	}
	cr, err := api.NewCredential(fw.uid, fw.gid, fw.groups, fw.node, time.Now())
	var tok string
	if err == nil {
		cr.Job = fw.job
		tok, err = cr.Encode(fw.key)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "corral-noded: "+err.Error())
		return
	}
	r.Header.Set(api.CredentialHeader, tok) // whatever the caller sent is replaced
	r.Body = http.MaxBytesReader(w, r.Body, maxJobRequest)
	fw.proxy.ServeHTTP(w, r)
}
