# fleet-audit: `make demo` and `make test` work from a fresh clone with Go and /bin/sh.
GO      ?= go
# Outside a git checkout VERSION is empty and the binary describes itself
# from its Go build info instead (cmd/fleet-audit/version.go).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test test-short demo lint fuzz bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/fleet-audit ./cmd/fleet-audit

# The audit and cmd suites run the real probe bundle on dozens of simulated
# nodes; on a busy 2-core machine that outlasts go test's default 10m.
test:
	$(GO) test -race -count=1 -timeout 25m ./...

# The edit loop: the in-process tests only; real sshd, sudo, the browser and
# fork-heavy end-to-end runs skip themselves under -short (make test runs them).
test-short:
	$(GO) test -short -count=1 ./...

demo: build
	./bin/fleet-audit demo --out demo-out

# staticcheck is looked up in PATH and in go env GOBIN/GOPATH's bin, where
# `go install honnef.co/go/tools/cmd/staticcheck@v0.8.2` puts it. On a
# developer machine without it lint says so and goes on; in CI (CI=true) a
# missing staticcheck fails lint, so it can never be skipped silently.
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || { d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH)/bin; [ -x "$$d/staticcheck" ] && echo "$$d/staticcheck"; })

lint:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	if [ -n "$(STATICCHECK)" ]; then "$(STATICCHECK)" ./...; \
	elif [ "$$CI" = true ]; then echo "lint: staticcheck not installed and CI=true requires it" >&2; exit 1; \
	else echo "lint: staticcheck not installed, skipped (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)" >&2; fi
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 20s ./inventory
	$(GO) test -run '^$$' -fuzz FuzzParseOutput -fuzztime 20s ./audit/probe

# Speed and memory, measured (never asserted in tests): see bench/.
bench:
	sh bench/run.sh

clean:
	rm -rf bin demo-out
