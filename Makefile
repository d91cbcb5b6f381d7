# Synapse build and test entry points. `make run` and `make test` are the two
# set-up commands of the README; both install missing prerequisites when root.
GO ?= go
BIN := bin/synapse
PKGS := ./...
# Release builds carry no symbol table or DWARF (-s -w: about 18 MB of the
# binary) and no local paths (-trimpath); `go test` and `go build` without
# make keep their debug information. They are static (CGO_ENABLED=0: only
# the DNS resolver and user lookups would use libc): the dynamic loader and
# libc cost every run about 1.5 MB of RSS and a few ms, and a static binary
# also runs in musl and distroless images.
BUILDFLAGS ?= -trimpath -ldflags "-s -w"
BUILDENV ?= CGO_ENABLED=0

.PHONY: all build run test test-landlock deps node-deps bench bench-compare redteam fmt vet web-assets clean

all: build

deps:
	@./scripts/deps.sh

web-assets:
	@./scripts/web-assets.sh

# npm packages the tests drive (testdata/npm/*).
node-deps:
	@./scripts/node-deps.sh

build: web-assets
	$(BUILDENV) $(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/synapse

run: deps build
	./$(BIN) $(ARGS)

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# staticcheck and deadcode at pinned versions (installed into bin/tools when
# missing); the architecture and package-doc rules run with the tests
# (internal/archtest).
lint:
	@GO=$(GO) ./scripts/lint.sh

test: deps web-assets node-deps fmt vet lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

bench: deps web-assets build
	./scripts/bench.sh
	@if [ -n "$(BASE)" ]; then ./scripts/bench-compare.sh $(BASE); fi

# Issue 30's figures side by side with an earlier commit (BASE, default
# e26c325~20), interleaved: make bench-compare BASE=v0.9.0 ROUNDS=5
bench-compare: deps web-assets
	./scripts/bench-compare.sh $(BASE)

# The red-team suite: every attack on the trust boundary (issue 11),
# performed for real (bwrap, git, files); runnable on its own.
redteam: deps web-assets
	$(GO) test -race -count=1 -run RedTeam $(PKGS)

# The red-team and escape suites under the Landlock backend, as user nobody
# inside a seccomp filter that refuses user namespaces (bubblewrap cannot
# start there, as in a default container). Run as root in CI.
test-landlock: deps
	@GO=$(GO) ./scripts/test-landlock.sh

clean:
	rm -rf bin
