# The README's commands. `make run` starts the service on embedded stores; `make test` runs
# every check CI runs.
GO          ?= go
BIN         := bin/platform
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION := 2026.2.2
STATICCHECK := $(GOBIN)/staticcheck

.PHONY: run build test vet staticcheck unit bench docs-check clean

run: build
	./$(BIN) serve

build:
	$(GO) build -o $(BIN) ./cmd/platform

test: vet staticcheck unit

vet:
	$(GO) vet ./...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

unit:
	$(GO) test -race -count=1 -timeout 30m ./...

# Benchmarks and load runs; figures go to docs/performance.md. Never part of `make test`.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./...
	$(GO) run ./cmd/loadgen -duration 5s -concurrency 8

clean:
	rm -rf bin
