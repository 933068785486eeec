// Package storetest breaks state files in the ways a disk, an operator or
// an attacker does, for the tests of every reader of ctld.db (the store,
// corral-ctld --check and its start). Only tests import it.
package storetest

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
)

// Damage is one way a state file gets broken; it acts on the file at path
// (a sound state file).
type Damage struct {
	Name string
	Do   func(t *testing.T, path string)
}

// Rewrite replaces the file's bytes with f(bytes).
func Rewrite(f func([]byte) []byte) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		t.Helper()
		d, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// replace puts something else than a file at path.
func replace(put func(string) error) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := put(path); err != nil {
			t.Fatal(err)
		}
	}
}

// Damages are the kinds of damage every reader of a state file must
// refuse with one line and without changing it (issue 11, finding 6).
// Before the fix the first made bbolt panic, truncations faulted
// (SIGBUS/SIGSEGV) and the empty file was initialised as a new store.
var Damages = []Damage{
	{"first 4 KiB zeroed", Rewrite(func(d []byte) []byte { clear(d[:4096]); return d })},
	{"both meta pages zeroed", Rewrite(func(d []byte) []byte { clear(d[:2*os.Getpagesize()]); return d })},
	{"second meta page header zeroed", Rewrite(func(d []byte) []byte {
		clear(d[os.Getpagesize() : os.Getpagesize()+16])
		return d
	})},
	{"truncated to half", Rewrite(func(d []byte) []byte { return d[:len(d)/2] })},
	{"truncated to one page", Rewrite(func(d []byte) []byte { return d[:os.Getpagesize()] })},
	{"0 bytes", Rewrite(func([]byte) []byte { return nil })},
	{"random garbage", Rewrite(func(d []byte) []byte {
		r := rand.New(rand.NewPCG(1, 2))
		for i := range d {
			d[i] = byte(r.Uint32())
		}
		return d
	})},
	{"garbage after intact meta pages", Rewrite(func(d []byte) []byte {
		r := rand.New(rand.NewPCG(3, 4))
		for i := 2 * os.Getpagesize(); i < len(d); i++ {
			d[i] = byte(r.Uint32())
		}
		return d
	})},
	{"a directory in its place", replace(func(p string) error { return os.Mkdir(p, 0o755) })},
	{"a FIFO in its place (reads would block)", replace(func(p string) error { return syscall.Mkfifo(p, 0o600) })},
	{"a dangling symlink in its place", replace(func(p string) error { return os.Symlink(p+".gone", p) })},
}

// Digest identifies what is at path (a hash of a file's bytes, or
// its type), to prove a refusal left it as it was.
func Digest(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		return "missing"
	}
	if !st.Mode().IsRegular() {
		return st.Mode().Type().String()
	}
	d, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(d))
}
