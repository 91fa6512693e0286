# fleet-audit: `make demo` and `make test` work from a fresh clone with Go and /bin/sh.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test demo lint fuzz bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/fleet-audit ./cmd/fleet-audit

# The audit and cmd suites run the real probe bundle on dozens of simulated
# nodes; on a busy 2-core machine that outlasts go test's default 10m.
test:
	$(GO) test -race -count=1 -timeout 25m ./...

demo: build
	./bin/fleet-audit demo --out demo-out

lint:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	if command -v staticcheck >/dev/null 2>&1; then staticcheck ./...; fi
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 20s ./inventory
	$(GO) test -run '^$$' -fuzz FuzzParseOutput -fuzztime 20s ./audit/probe

# Speed and memory, measured (never asserted in tests): see bench/.
bench:
	sh bench/run.sh

clean:
	rm -rf bin demo-out
