# fleet-audit: `make demo` and `make test` work from a fresh clone with Go and /bin/sh.
GO      ?= go
# The release is cmd/fleet-audit/version.go's, its one home. A commit
# tagged with it is that tag (v0.1.0, -dirty with changes); any other
# commit is a development build of that release with its commit
# (v0.1.0-dev+2a971a8c1234), never a bare hash. Outside a git checkout
# VERSION is empty and the binary describes itself from its Go build info
# (cmd/fleet-audit/version.go, versionOf), in the same form.
RELEASE := $(shell sed -n 's/^const release = "\(.*\)"$$/\1/p' cmd/fleet-audit/version.go)
VERSION ?= $(shell git describe --tags --match 'v$(RELEASE)' --exact-match --dirty 2>/dev/null || \
	{ h=$$(git describe --always --abbrev=12 --dirty --exclude='*' 2>/dev/null) && echo "v$(RELEASE)-dev+$$h"; })
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test test-short demo lint fuzz bench clean dist man version

# The version make build stamps, for scripts (.ci/run checks the installed
# package against it).
version:
	@echo '$(VERSION)'

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/fleet-audit ./cmd/fleet-audit

# The audit and cmd suites run the real probe bundle on dozens of simulated
# nodes; on a busy 2-core machine that outlasts go test's default 10m.
# A -race binary sleeps a second in its main goroutine before it exits
# (GORACE atexit_sleep_ms, default 1000: go.dev/doc/articles/race_detector);
# the end-to-end tests run the CLI as a process about 150 times, so that
# sleep alone was minutes of the suite. Races found
# during a run are reported all the same; GORACE options already set win.
#
# The race detector needs cgo, which Go turns off where it finds no C
# compiler (go env CGO_ENABLED says 0): there the suite runs without
# -race, and the tests that need cc name that tier at the end.
RACE     ?= $(shell [ "$$($(GO) env CGO_ENABLED 2>/dev/null)" = 1 ] && echo -race)
PKGS     ?= ./...
TESTFLAGS ?=
test:
	$(call go_test,GORACE="atexit_sleep_ms=0 $$GORACE" $(GO) test $(RACE) -count=1 -timeout 25m $(TESTFLAGS) $(PKGS))

# The edit loop: the in-process tests only; real sshd, sudo, the browser and
# fork-heavy end-to-end runs skip themselves under -short (make test runs them).
test-short:
	$(call go_test,$(GO) test -short -count=1 $(TESTFLAGS) $(PKGS))

# go_test runs the go test command line $(1), then prints the tiers of
# tests that skipped for want of a tool, one line each with the package
# that provides it, and exits with go test's status. go test shows nothing
# of a package that passes, so the tests leave the lines in a directory
# (FLEET_AUDIT_SKIPPED_DIR, internal/testtools.Tiers holds them all).
define go_test
	@echo '$(1)'; d=$$(mktemp -d) || exit 1; \
	FLEET_AUDIT_SKIPPED_DIR=$$d $(1); status=$$?; \
	if [ -n "$$(ls "$$d")" ]; then cat "$$d"/*; else echo "no test tier skipped for want of a tool"; fi; \
	rm -rf "$$d"; exit $$status
endef

demo: build
	./bin/fleet-audit demo --out demo-out

# staticcheck is looked up in PATH and in go env GOBIN/GOPATH's bin, where
# `go install honnef.co/go/tools/cmd/staticcheck@v0.8.2` puts it. On a
# developer machine without it lint says so and goes on; in CI (CI=true) a
# missing staticcheck fails lint, so it can never be skipped silently.
# shellcheck lints the probes (audit/probe/probes, examples/probes) the same
# way: skipped with a note on a developer machine, required in CI.
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || { d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH)/bin; [ -x "$$d/staticcheck" ] && echo "$$d/staticcheck"; })

lint:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	if [ -n "$(STATICCHECK)" ]; then "$(STATICCHECK)" ./...; \
	elif [ "$$CI" = true ]; then echo "lint: staticcheck not installed and CI=true requires it" >&2; exit 1; \
	else echo "lint: staticcheck not installed, skipped (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)" >&2; fi
	if command -v shellcheck >/dev/null; then .ci/shellcheck.sh; \
	elif [ "$$CI" = true ]; then echo "lint: shellcheck not installed and CI=true requires it" >&2; exit 1; \
	else echo "lint: shellcheck not installed, skipped (apt-get install shellcheck)" >&2; fi
	$(GO) mod tidy && git diff --exit-code go.mod go.sum
	# The binary is released for macOS too (make dist): a Linux-only call
	# in anything it links fails here, not at the end of CI.
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/fleet-audit

# make fuzz runs every fuzz target of the parsers that read untrusted
# input, one after another, each for FUZZTIME (go test -fuzztime: a
# duration, or a count of inputs such as 60000x). A duration that ends
# while a worker minimises a new input can be reported as "context
# deadline exceeded"; .ci/run passes counts for that reason. Minimising
# one of the large seeds (a 50 KB saved run) takes long, so it is bounded
# by FUZZMINIMIZE. A crash leaves its input under the package's
# testdata/fuzz/<target>/, where go test replays it as a regression seed.
FUZZTIME     ?= 10s
FUZZMINIMIZE ?= 5s
FUZZ_TARGETS := FuzzLoad:./inventory FuzzLoadAnsible:./inventory \
	FuzzParseOutput:./audit/probe FuzzParseProbe:./audit/probe \
	FuzzRedactPrefilter:./audit/probe FuzzParseChecks:./audit/check FuzzParseWaivers:./audit/catalog FuzzReadJSON:./result
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $${t%%:*} in $${t#*:} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t%%:*}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) "$${t#*:}"; \
	done

# Speed and memory, measured (never asserted in tests): see bench/.
# scale.sh is the client alone at 100, 1,000 and 10,000 nodes, one table;
# sshscale.sh the client over real SSH at the same sizes, per node, beside
# BENCH_BEFORE's (default: the last revision before issue 31 cut the
# client's cost per node; BENCH_BEFORE= measures this tree alone).
BENCH_BEFORE ?= e243306
bench:
	sh bench/run.sh
	sh bench/forks.sh
	sh bench/scale.sh
	BEFORE=$(BENCH_BEFORE) sh bench/sshscale.sh

# Release artifacts under dist/, from a clone with Go alone: nfpm and
# cyclonedx-gomod are Go modules run at pinned versions, so no packaging
# tool has to be installed. nfpm builds the .deb and .rpm without dpkg-deb
# or rpmbuild. The SBOM is CycloneDX, one per binary: cyclonedx-gomod's bin
# mode reads the modules the go command recorded in that binary (go version
# -m), so it lists what was linked for that target and needs no git
# history, which its app mode does (it fails in a git worktree). -std lists
# the Go standard library linked in, -licenses each module's licence as
# detected from its source in the module cache (reported as evidence: a
# detection, not an assertion). fleet-audit itself and std are not in the
# cache, so they carry none; the tarballs and packages carry LICENSE. The
# SPDX module on offer (github/go-spdx) parses licence expressions and
# writes no SBOM. Each tarball also carries the man page and completions
# under share/, laid out as under /usr/local/share.
NFPM      ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0
CYCLONEDX ?= $(GO) run github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
DIST_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST_VERSION := $(or $(VERSION),dev)
# Debian and RPM versions must start with a digit and keep "-" for the
# package release: v1.2.3 is 1.2.3; a development build v1.2.3-dev+abc is
# 1.2.3~dev+abc, which sorts before 1.2.3 (a tilde sorts before anything,
# even the end: deb-version(7), and rpm since 4.10), as the build comes
# before the release; -dirty is .dirty; a build outside a checkout (dev)
# is 0.0.0+dev.
PKG_VERSION := $(shell echo '$(DIST_VERSION)' | sed -E -e 's/^v([0-9])/\1/' -e '/^[0-9]+\.[0-9]/!s/^/0.0.0+/' -e 's/-dev/~dev/' -e 's/-/./g')
# Two builds of one commit give the same bytes, so SHA256SUMS can be checked
# by rebuilding: file times in the tarballs and packages are the commit's
# (nfpm reads SOURCE_DATE_EPOCH: reproducible-builds.org/specs/source-date-epoch),
# and the SBOMs carry no random serial number and no build time.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# The man page, generated from the same command and flag definitions as
# --help (urfave/cli's ToMan, through go-md2man, which the binary links
# already): man -l bin/fleet-audit.1 shows it.
man: build
	./bin/fleet-audit man > bin/fleet-audit.1

# The packages' man page and shell completions come from the host's own
# build of this commit (bin/fleet-audit), since the cross-built binaries
# may not run here. Man pages are gzip -9 (Debian Policy 12.1), -n so
# that the archive keeps no file name or time.
dist: man
	rm -rf dist && mkdir -p dist/share
	gzip -9n < bin/fleet-audit.1 > dist/share/fleet-audit.1.gz
	for shell in bash zsh fish; do ./bin/fleet-audit completion $$shell > dist/share/fleet-audit.$$shell; done
	set -e; for target in $(DIST_TARGETS); do \
	  os=$${target%/*}; arch=$${target#*/}; name=fleet-audit_$(DIST_VERSION)_$${os}_$${arch}; \
	  mkdir -p dist/$$name; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$$name/fleet-audit ./cmd/fleet-audit; \
	  cp README.md LICENSE dist/$$name/; \
	  mkdir -p dist/$$name/share/man/man1 dist/$$name/share/bash-completion/completions \
	    dist/$$name/share/zsh/site-functions dist/$$name/share/fish/vendor_completions.d; \
	  cp dist/share/fleet-audit.1.gz dist/$$name/share/man/man1/; \
	  cp dist/share/fleet-audit.bash dist/$$name/share/bash-completion/completions/fleet-audit; \
	  cp dist/share/fleet-audit.zsh dist/$$name/share/zsh/site-functions/_fleet-audit; \
	  cp dist/share/fleet-audit.fish dist/$$name/share/fish/vendor_completions.d/fleet-audit.fish; \
	  tar -C dist --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) -czf dist/$$name.tar.gz $$name; \
	  $(CYCLONEDX) bin -json -noserial -notimestamp -std -licenses -version $(DIST_VERSION) -output dist/$$name.cdx.json dist/$$name/fleet-audit; \
	  if [ $$os = linux ]; then for packager in deb rpm; do \
	    PKG_ARCH=$$arch PKG_VERSION='$(PKG_VERSION)' BINARY=dist/$$name/fleet-audit \
	      $(NFPM) package --config nfpm.yaml --packager $$packager --target dist/; \
	  done; fi; \
	done
	cd dist && sha256sum *.tar.gz *.deb *.rpm *.cdx.json > SHA256SUMS

clean:
	rm -rf bin demo-out dist
