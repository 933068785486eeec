// Package eventq is noded's durable outbox of job events for ctld.
//
// Put writes an event to its own file (temporary file, fsync, rename,
// directory fsync) before returning, so an event that Put accepted survives
// a crash of noded or of the machine. Run sends queued events in order, in
// batches, and deletes them only after ctld answered 2xx; on failure it
// retries with backoff, and a new Put wakes it at once. Delivery is at least
// once: ctld applies events idempotently.
package eventq
