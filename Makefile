# corral — build, test, demo, bench.
#   make demo   builds, runs a single-host cluster and plays the seed scenario
#   make test   the whole suite (needs root for the container and cgroup tests)
GO      ?= go
BIN     := bin
PKGS    := ./...
# bin/corral and bin/corral-init are pure Go (static); corral-ctld uses cgo
# so user lookups go through NSS (LDAP/SSSD users resolve);
# bin/corral-noded and bin/corral-shim embed libcontainer and need cgo.
NOCGO   := CGO_ENABLED=0
CGO     := CGO_ENABLED=1
# "seccomp" compiles libcontainer's seccomp support (cgo + libseccomp-dev)
# into corral-shim (which creates the containers) and corral-noded, so jobs
# run under container.DefaultSeccomp; the tests use it too
# (e2e/cluster_test.go builds both with the same tag).
TAGS    := seccomp
# bin/corral leaves out urfave/cli's documentation generator and corral's
# own (the hidden `corral docs`, which `go generate` runs from source):
# the man-page renderer they link is initialised by every command, the
# Slurm names called in loops included (docs/benchmarks.md).
CORRAL_TAGS := urfave_cli_no_docs

# The Slurm names (docs/slurm.md): links to bin/corral-slurm, which
# behaves as the command it is called by. It is package cli built with the
# slurmonly tag: the Slurm names without corral's own commands, urfave/cli
# or the table renderer, so that squeue and sbatch, which pipelines call in
# loops, start a smaller binary (docs/benchmarks.md); stripped of its
# symbol table and DWARF (panics still name functions). bin/corral
# answers to the same names when called by them.
# PATH=$PWD/bin/slurm:$PATH is all a user needs on a dev cluster.
SLURM_TAGS := slurmonly
SLURM_CMDS := sbatch squeue scancel sacct sacctmgr sinfo scontrol sprio sshare sstat srun salloc
# make install PREFIX=/usr/local [SLURM_NAMES=1] [DESTDIR=...]: corral and
# the daemons into $(PREFIX)/bin and $(PREFIX)/sbin; with SLURM_NAMES=1
# also corral-slurm and the Slurm names linked to it beside corral, for
# sites that replace Slurm.
PREFIX  ?= /usr/local
SLURM_NAMES ?=

.PHONY: all build test demo bench deps vet fmt clean install web-assets screenshots

all: build

build: deps web-assets
	@mkdir -p $(BIN)
	$(NOCGO) $(GO) build -tags $(CORRAL_TAGS) -o $(BIN)/corral ./cmd/corral
	$(NOCGO) $(GO) build -tags $(SLURM_TAGS) -ldflags '-s -w' -o $(BIN)/corral-slurm ./cmd/corral-slurm
	$(CGO) $(GO) build -o $(BIN)/corral-ctld ./cmd/corral-ctld
	$(NOCGO) $(GO) build -o $(BIN)/corral-init ./cmd/corral-init
	$(CGO) $(GO) build -tags $(TAGS) -o $(BIN)/corral-noded ./cmd/corral-noded
	$(CGO) $(GO) build -tags $(TAGS) -o $(BIN)/corral-shim ./cmd/corral-shim
	@mkdir -p $(BIN)/slurm
	@for c in $(SLURM_CMDS); do ln -sfn ../corral-slurm $(BIN)/slurm/$$c; done

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin
	install -m 0755 $(BIN)/corral $(DESTDIR)$(PREFIX)/bin/corral
	install -m 0755 $(BIN)/corral-ctld $(BIN)/corral-noded $(BIN)/corral-shim $(BIN)/corral-init $(DESTDIR)$(PREFIX)/sbin/
	@if [ -n "$(SLURM_NAMES)" ] && [ "$(SLURM_NAMES)" != 0 ]; then \
		install -m 0755 $(BIN)/corral-slurm $(DESTDIR)$(PREFIX)/bin/corral-slurm; \
		for c in $(SLURM_CMDS); do ln -sfn corral-slurm $(DESTDIR)$(PREFIX)/bin/$$c; done; \
		echo "installed the Slurm names in $(DESTDIR)$(PREFIX)/bin: $(SLURM_CMDS)"; \
	fi

# Installs what the project needs from Debian's packages (idempotent; skips
# what is already there).
deps:
	@scripts/install-deps.sh

# The dashboard's front-end libraries (xterm.js and its fit addon) come
# from npm at the versions web/package-lock.json pins, installed without
# running their scripts, and only the built files the terminal page loads
# are copied into web/static/vendor, which go:embed compiles into the
# controller. Both folders are ignored by git; the stamp makes this run
# again only when the lock file changes (docs/web.md).
VENDOR       := web/static/vendor
VENDOR_STAMP := $(VENDOR)/.stamp

web-assets: $(VENDOR_STAMP)

$(VENDOR_STAMP): web/package.json web/package-lock.json | deps
	cd web && npm ci --ignore-scripts --no-audit --no-fund
	@mkdir -p $(VENDOR)
	cp web/node_modules/@xterm/xterm/lib/xterm.js web/node_modules/@xterm/xterm/css/xterm.css \
		web/node_modules/@xterm/addon-fit/lib/addon-fit.js $(VENDOR)/
	@touch $@

# staticcheck is pinned in go.mod (a tool line), so go fetches and builds
# that version; staticcheck.conf says which checks are off and why. The
# tests build with lockcheck too: the controller's ordered locks then
# panic when taken out of order (package ctld/internal/lockorder).
test: build
	$(GO) vet -tags $(TAGS) $(PKGS)
	$(GO) tool staticcheck -tags $(TAGS) $(PKGS)
	TAGS=$(TAGS),lockcheck scripts/test.sh

demo: build
	scripts/demo.sh

bench: build
	scripts/bench.sh

# The dashboard's browser tests, writing their screenshots into docs/web
# (shown in docs/web.md).
screenshots: build
	CORRAL_SCREENSHOTS=$(CURDIR)/docs/web $(CGO) $(GO) test -tags $(TAGS) -count=1 -run 'TestDashboard' ./e2e/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) $(VENDOR) web/node_modules
