package ctld

import (
	"net/http"

	"github.com/corral-hpc/corral/api"
)

// imagesEndpoint serves /v1/images: the container images on the nodes.
type imagesEndpoint struct{ srv *Server }

func (e imagesEndpoint) list(w http.ResponseWriter, r *http.Request, _ peer) {
	out, err := e.srv.images(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// op pulls, imports or removes an image on nodes.
func (e imagesEndpoint) op(w http.ResponseWriter, r *http.Request, caller peer) {
	var req api.ImageRequest
	if err := decodeBody(r.Body, &req, true); err != nil {
		writeError(w, err)
		return
	}
	out, err := e.srv.imageOp(r.Context(), caller, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
