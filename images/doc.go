// Package images is a node's local image store: OCI images imported from
// an OCI layout (directory or tar), a `docker save` archive or a plain
// root file system directory, or pulled from a registry, each unpacked
// once into a read-only root file system that every job using the image
// shares (a job writes to its own overlay layer; see container.Image).
//
// Image formats and registries are go-containerregistry's; this package
// only flattens an image (mutate.Extract) into a directory and keeps an
// index of names.
//
// Layout under Root:
//
//	index.json        name:tag -> image (replaced atomically; read without a lock)
//	lock              flock(2) held by writers
//	rootfs/<id>/      the unpacked image; id is the config digest's hex
//	tmp/              unpacks and tar sources in progress
package images
