package api

import "time"

// Image is one image in a node's local store (GET /v1/images on the node
// plane; corral image list).
type Image struct {
	Ref     string    `json:"ref"` // canonical name:tag
	ID      string    `json:"id"`  // config digest; equal IDs share one unpacked tree
	Digest  string    `json:"digest,omitempty"`
	Source  string    `json:"source"`
	Size    int64     `json:"size"` // unpacked bytes
	Created time.Time `json:"created"`
	// Apps are the web apps its corral.apps label declares (AppsLabel);
	// the dashboard's launch dialog offers them.
	Apps []App `json:"apps,omitempty"`
	// Nodes lists the nodes holding it (filled in by ctld).
	Nodes []string `json:"nodes,omitempty"`
}

// Image operations of ImageRequest.
const (
	ImagePull   = "pull"
	ImageImport = "import"
	ImageRemove = "rm"
)

// ImageRequest pulls, imports or removes an image on a node (POST
// /v1/images on the node plane).
type ImageRequest struct {
	Op  string `json:"op"`
	Ref string `json:"ref"`
	// Source is import's OCI layout, docker save archive or root file
	// system directory: a path on the node.
	Source string `json:"source,omitempty"`
	// Nodes restricts the operation to these nodes (user plane); empty:
	// every node that is up.
	Nodes []string `json:"nodes,omitempty"`
}

// OutputRequest reads part of a job's stdout or stderr on its node (POST
// /v1/output on the node plane). Launch is the job's launch request as
// ctld sent it (the script may be left out): the node expands the output
// patterns from it and opens the file as the job's user.
type OutputRequest struct {
	Launch LaunchRequest `json:"launch"`
	Stderr bool          `json:"stderr,omitempty"`
	Offset int64         `json:"offset"`
	// Limit caps the bytes returned (the node caps it too).
	Limit int64 `json:"limit,omitempty"`
}

// OutputChunk is a piece of a job's output from Offset; Next is where the
// following read starts; Size is the file's size when read.
type OutputChunk struct {
	Path   string `json:"path"`
	Data   []byte `json:"data"`
	Offset int64  `json:"offset"`
	Next   int64  `json:"next"`
	Size   int64  `json:"size"`
}
