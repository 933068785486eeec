package ctld

import (
	"crypto/ecdsa"
	"crypto/x509"
	"net/http"
	"strings"
	"time"

	"github.com/corral-hpc/corral/api"
	"github.com/corral-hpc/corral/ctld/fault"
)

// handleNodeCert serves POST /v1/node/cert: a node (the request is signed
// with the cluster key, checked before this runs) gets its public key
// certified for the hosts it serves on, so ctld can reach it over TLS
// pinned to the CA.
func (t *clusterTLS) handleNodeCert(w http.ResponseWriter, r *http.Request) {
	if t.ca == nil {
		writeError(w, fault.Errorf(fault.Conflict, "this controller runs with --insecure-plaintext: it issues no certificates"))
		return
	}
	var req api.NodeCertRequest
	if err := decodeBody(r.Body, &req, false); err != nil {
		writeError(w, err)
		return
	}
	pub, err := x509.ParsePKIXPublicKey(req.PublicKey)
	if err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "certificate request: bad public key: %v", err))
		return
	}
	if _, ok := pub.(*ecdsa.PublicKey); !ok {
		writeError(w, fault.Errorf(fault.Invalid, "certificate request: the public key must be ECDSA"))
		return
	}
	der, err := t.ca.Sign(pub, req.Hosts, time.Now())
	if err != nil {
		writeError(w, fault.Errorf(fault.Invalid, "%v", err))
		return
	}
	t.log.Printf("certified a node key for %s", strings.Join(req.Hosts, ","))
	writeJSON(w, http.StatusOK, api.NodeCertResponse{Cert: der})
}
