// Package containertest holds helpers for tests that run real job
// containers: root checks, building corral-init, users' directories and
// leak checks. Only tests import it.
package containertest
