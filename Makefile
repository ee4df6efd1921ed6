# The README's commands. `make run` starts the service on embedded stores; `make test` runs
# every check CI runs.
GO          ?= go
BIN         := bin/platform
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(GOBIN)/staticcheck

.PHONY: run build test vet staticcheck kubeconform unit bench conformance docs clean

run: build
	./$(BIN) serve

build:
	$(GO) build -o $(BIN) ./cmd/platform

test: vet staticcheck kubeconform unit

vet:
	$(GO) vet ./...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# Renders every Kubernetes overlay and validates it against the vendored schemas.
kubeconform:
	bash .ci/kubeconform.sh

unit:
	$(GO) test -race -count=1 -timeout 30m ./...

# The official MCP conformance suite against the binary (also part of `unit`); .ci/run
# installs the suite.
conformance:
	$(GO) test -count=1 -run TestMCPConformance -v ./e2e/

# Benchmarks and load runs; figures go to docs/performance.md. Never part of `make test`.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./...
	$(GO) run ./cmd/loadgen -duration 5s -concurrency 8

# Regenerates the configuration reference in docs/operations.md from the code (a test
# fails while they differ).
docs:
	REF="$$($(GO) run ./cmd/platform config-reference)" awk '/<!-- config-reference:start -->/{print; print ENVIRON["REF"]; skip=1; next} /<!-- config-reference:end -->/{skip=0} !skip' docs/operations.md > docs/operations.md.new
	mv docs/operations.md.new docs/operations.md

clean:
	rm -rf bin
