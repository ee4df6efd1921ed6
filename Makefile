# The README's commands. `make run` starts the service on embedded stores; `make test` runs
# every check CI runs.
GO          ?= go
BIN         := bin/platform
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(GOBIN)/staticcheck

.PHONY: run build test vet staticcheck kubeconform unit unit-mongo unit-norace bench bench-quick conformance docs clean

run: build
	./$(BIN) serve

# bin/platform-iac runs Trivy's IaC checks for security_assessment; it is a module of its own
# (Trivy's hundred modules stay out of the server) built with encoding/json/v2 as Trivy needs.
IAC_HELPER := bin/platform-iac
IAC_MODULE := tools/security/trivyhelper

build:
	$(GO) build -o $(BIN) ./cmd/platform
	cd $(IAC_MODULE) && GOEXPERIMENT=jsonv2 $(GO) build -o $(CURDIR)/$(IAC_HELPER) .

test: vet staticcheck kubeconform unit unit-mongo unit-norace

vet:
	$(GO) vet ./...
	cd $(IAC_MODULE) && GOEXPERIMENT=jsonv2 $(GO) vet .

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...
	cd $(IAC_MODULE) && GOEXPERIMENT=jsonv2 $(STATICCHECK) .

# Renders every Kubernetes overlay and validates it against the vendored schemas.
kubeconform:
	bash .ci/kubeconform.sh

unit:
	$(GO) test -race -count=1 -timeout 30m ./...

# The GraphQL API's tests a second time on the mongo backend, over an embedded FerretDB
# (internal/testbackend): gql's, tenant's (through HTTP, export and import included) and the
# binary's that serve the API. Left out: TestAccessFiltersMatchCEL, which runs both backends
# itself, and TestCacheIsBounded, the registry's cache over 300 projects, not the API (2 min
# on either backend).
MONGO_BINARY_TESTS := TestProjectSurvivesRestart|TestHostRouting|TestUniqueIndexOnDuplicates|TestChangeReachesOtherReplica|TestShutdownLosesNoAcknowledgedWrite|TestExportImport|TestExportImportOverAdminAPI|TestImportReplaceKeepsRecordsOnFailure|TestHistoryAndRollback|TestQuotas

# The tests that hold tools/code's Go first pass to go/scanner and go/parser over all of
# GOROOT take 200 s under -race on one goroutine, so `unit` skips them there and they run
# here without it (about 25 s).
unit-norace:
	$(GO) test -count=1 -timeout 10m -run '^(TestTokensAsGoScanner|TestFirstPassMatchesGoParser)$$' ./tools/code/...

unit-mongo:
	PLATFORM_TEST_BACKEND=mongo $(GO) test -race -count=1 -timeout 30m \
		-skip '^(TestAccessFiltersMatchCEL|TestCacheIsBounded)$$' ./gql ./tenant
	PLATFORM_TEST_BACKEND=mongo $(GO) test -race -count=1 -timeout 30m -run '^($(MONGO_BINARY_TESTS))$$' ./cmd/platform

# The official MCP conformance suite against the binary (also part of `unit`); .ci/run
# installs the suite.
conformance:
	$(GO) test -count=1 -run TestMCPConformance -v ./e2e/

# Benchmarks and load runs; figures go to docs/performance.md, whose commands are exactly these
# (each section names its own). Never part of `make test`. Every step says what it runs, how
# long it usually takes and how long it took. `make bench-quick` gives the headline figures
# (GraphQL benchmarks, requests per second, the PocketBase comparison at BENCH_QUICK_N records)
# in a few minutes. The comparison needs ../shared/peers/pocketbase (PB_KIT) and is skipped with
# a note without it. BENCH_1M=1 adds the comparison at 1,000,000 records (step 12b).
BENCH_N       ?= 100000
BENCH_1M      ?=
BENCH_QUICK_N ?= 10000
STEP          := bash bench/step.sh

bench:
	@echo "make bench: 13 steps, about 73 minutes on 2 cores; make bench-quick gives the headline figures in about 3"
	@$(STEP) 1/13 "about 3 min" $(GO) test -run '^$$' -bench . -skip BenchmarkSearch -benchmem -count 3 -benchtime 2s ./gql
	@$(STEP) 1a/13 "about 2 min" $(GO) test -run '^$$' -bench BenchmarkSearch -benchtime 100x ./gql
	@$(STEP) 1b/13 "about 2 min" $(GO) test -count=1 -run TestOracle ./gql -oracle.n=30000
	@$(STEP) 2/13 "about 1 min" $(GO) run ./cmd/loadgen -duration 5s -concurrency 8
	@$(STEP) 3/13 "about 1 min" $(GO) test -run '^$$' -bench 'Verify|Guard|Fetch|CompileAccess' -benchmem ./tenant
	@$(STEP) 3b/13 "about 2 min" $(GO) test -run '^$$' -bench BenchmarkSubscriptions -benchtime 200x -count 3 ./tenant
	@$(STEP) 3c/13 "under 1 min" $(GO) test -run '^$$' -bench FetchMetering -benchtime 20000x -count 6 ./tenant
	@$(STEP) 3d/13 "under 1 min" env ACCESS_PROPERTY_ROUNDS=20 $(GO) test -count=1 -v -run '^TestAccessFiltersMatchCEL$$' ./tenant
	@$(STEP) 3e/13 "under 1 min" $(GO) test -run '^$$' -bench FairShareDo -benchmem -count 3 ./pressure
	@$(STEP) 3f/13 "under 1 min" $(GO) test -run '^$$' -bench BenchmarkSeed -benchtime 100x -count 3 ./tenant
	@$(STEP) 3g/13 "about 2 min" $(GO) test -run '^$$' -bench WebhookDelivery -benchtime 1x -timeout 10m ./cmd/platform
	@$(STEP) 4/13 "about 5 min" $(GO) test -run '^$$' -bench BenchmarkTenThousandProjects -benchtime 1x -timeout 30m ./tenant
	@$(STEP) 4b/13 "about 3 min" $(GO) test -run '^$$' -bench BenchmarkTypeChange -benchtime 3x -count 3 ./tenant
	@$(STEP) 5/13 "about 2 min" $(GO) test -run '^$$' -bench VersusSDK -benchmem -count 5 -benchtime 3000x ./mcpserver
	@$(STEP) 5b/13 "about 1 min" $(GO) test -run '^$$' -bench 'ToolCall|Limiter' -benchmem -count 3 -benchtime 3000x ./mcpserver
	@$(STEP) 5c/13 "under 1 min" $(GO) test -run '^$$' -bench EmbeddedRedis -benchmem -count 5 ./store
	@$(STEP) 5d/13 "under 1 min" $(GO) test -run '^$$' -bench BenchmarkBackupUnderWrites -benchtime 8x ./store
	@$(STEP) 6/13 "about 3 min" $(GO) test -run '^$$' -bench . ./tools/code
	@GO=$(GO) $(STEP) 6b/13 "about 10 min" bench/code-reference.sh
	@$(STEP) 7/13 "about 2 min" $(GO) test -run '^$$' -bench . ./tools/cloud ./tools/security
	@$(STEP) 8/13 "under 1 min" $(GO) test -run '^$$' -bench BenchmarkMiddleware ./telemetry
	@$(STEP) 9/13 "about 3 min" $(GO) test -run '^$$' -bench 'BenchmarkSQLite' -skip BenchmarkSQLiteUnindexedPage -benchtime 1s -benchmem ./store
	@$(STEP) 9b/13 "about 3 min" $(GO) test -run '^$$' -bench 'BenchmarkCount$$|BenchmarkInsertGeneration' -benchtime 2s -timeout 20m ./store
	@$(STEP) 9c/13 "about 1 min, 4 with BENCH_1M=1" $(GO) test -run '^$$' -bench BenchmarkSQLiteUnindexedPage $(if $(BENCH_1M),-benchtime 10x -count 2 -timeout 30m,-benchtime 40x -count 3) ./store
	@$(STEP) 10/13 "under 1 min" $(GO) test -run '^$$' -bench BenchmarkMongoRecord -benchmem -count 3 ./store
	@$(STEP) 11/13 "about 3 min" $(GO) test -run '^$$' -bench 'Benchmark(SQLite|Mongo)$$/records=10000' -benchtime 3x ./store
	@$(STEP) 12/13 "about 12 min" bench/pocketbase.sh $(BENCH_N)
	@if [ -n "$(BENCH_1M)" ]; then $(STEP) 12b/13 "about 30 min" bench/pocketbase.sh 1000000; \
	else echo; echo "== bench step 12b/13 skipped: BENCH_1M=1 make bench adds the comparison at 1,000,000 records (about 30 min)"; fi
	@$(STEP) 12c/13 "about 1 min" bench/files.sh 200 4
	@$(STEP) 13/13 "about 4 min" $(GO) test -run '^$$' -bench Attacks -benchtime 1x -timeout 20m ./e2e
	@$(STEP) 13b/13 "about 2 min" $(GO) test -run '^$$' -bench NoisyNeighbour -benchtime 1x -timeout 30m ./e2e
	@USAGE_REQUESTS=100000 $(STEP) 13c/13 "about 1 min" $(GO) test -count 1 -run TestUsageAcrossReplicasAndRestart -v -timeout 20m ./e2e
	@$(STEP) 13d/13 "about 3 min" $(GO) test -run '^$$' -bench AnalysisFlood -benchtime 1x -timeout 20m ./e2e
	@$(STEP) 13e/13 "about 2 min" bench/noisy-neighbour.sh

bench-quick:
	@echo "make bench-quick: 3 steps, about 3 minutes on 2 cores (make bench: every figure of docs/performance.md)"
	@$(STEP) 1/3 "about 1 min" $(GO) test -run '^$$' -bench . -skip BenchmarkSearch -benchmem ./gql
	@$(STEP) 2/3 "under 1 min" $(GO) run ./cmd/loadgen -duration 2s -concurrency 8
	@DURATION=3s $(STEP) 3/3 "about 2 min" bench/pocketbase.sh $(BENCH_QUICK_N) --indexed-only

# Regenerates the configuration reference in docs/operations.md from the code (a test
# fails while they differ).
docs:
	REF="$$($(GO) run ./cmd/platform config-reference)" awk '/<!-- config-reference:start -->/{print; print ENVIRON["REF"]; skip=1; next} /<!-- config-reference:end -->/{skip=0} !skip' docs/operations.md > docs/operations.md.new
	mv docs/operations.md.new docs/operations.md

clean:
	rm -rf bin
