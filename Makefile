# Quarry's commands. `make help` lists them. Recipes call the Go toolchain
# and the scripts in scripts/; tools (templ, staticcheck) are go.mod tools,
# so nothing needs installing globally besides Go itself.

GO       ?= go
BIN      := bin/quarry
FUZZTIME ?= 10s
TRIALS   ?= 30

.DEFAULT_GOAL := help
.PHONY: help generate build run test roundtrip e2e screenshots bench fuzz chaos lint check release

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

generate: ## Regenerate templ components (*_templ.go)
	$(GO) tool templ generate

build: ## Build the binary into bin/quarry
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/web

run: build ## Build, then serve on QUARRY_ADDR (default 127.0.0.1:8080)
	./$(BIN) serve

test: ## Install browser deps and PostgreSQL if missing, then run every test with -race (the exhaustive workflow suite, the corpus round trip and the text index's comparisons with FTS5 (tokens over all of Unicode and 20k corpus records, random searches) last, without -race, which slows them tenfold, printing their figures; then the file formats' agreement with other projects' expected parses, one peers: line a format; then the store, engine, API (handlers, app) and command-line suites again on PostgreSQL, without -race)
	./scripts/setup-e2e.sh
	./scripts/setup-postgres.sh
	$(GO) test -race -count=1 -timeout 35m -skip '^(TestExhaustiveBuiltinWorkflows|TestCorpusRoundTrip|TestTokenizeMatchesFTS5OnEveryCodePoint|TestTokenizeMatchesFTS5OnCorpus|TestSearchMatchesFTS5|TestLibraryShapedQueriesMatchFTS5)$$' ./...
	@out=$$($(GO) test -count=1 -timeout 15m -run '^(TestTokenizeMatchesFTS5OnEveryCodePoint|TestTokenizeMatchesFTS5OnCorpus|TestSearchMatchesFTS5|TestLibraryShapedQueriesMatchFTS5)$$' -v ./internal/textindex/ 2>&1); status=$$?; \
	if [ $$status -ne 0 ]; then echo "$$out"; exit $$status; fi; \
	echo "$$out" | grep -E 'differences|^ok'
	@out=$$($(GO) test -count=1 -timeout 15m -run '^TestCorpusRoundTrip$$' -v ./internal/library/ 2>&1); status=$$?; \
	if [ $$status -ne 0 ]; then echo "$$out"; exit $$status; fi; \
	echo "$$out" | grep -E '^roundtrip:|^ok'
	@out=$$($(GO) test -count=1 -timeout 15m -run '^TestExhaustiveBuiltinWorkflows$$' -v ./internal/app/ 2>&1); status=$$?; \
	if [ $$status -ne 0 ]; then echo "$$out"; exit $$status; fi; \
	echo "$$out" | grep -E '^exhaustive:|^ok'
	@out=$$($(GO) test -count=1 -run '^TestPeerFixtures$$' -v ./internal/biblio/... 2>&1); status=$$?; \
	if [ $$status -ne 0 ]; then echo "$$out"; exit $$status; fi; \
	echo "$$out" | grep -E '^peers:'
	QUARRY_TEST_STORE=postgres $(GO) test -count=1 -timeout 20m -skip '^TestExhaustiveBuiltinWorkflows$$' ./internal/store/ ./internal/engine/ ./internal/engine/flow/ ./internal/handlers/ ./internal/app/ ./cmd/web/

roundtrip: ## Export the whole shared corpora (~170k records) in every format and re-import each into a fresh library and the same one, one line per format (make test runs a 1-in-25 sample)
	@QUARRY_ROUNDTRIP=full $(GO) test -count=1 -timeout 90m -run '^TestCorpusRoundTrip$$' -v ./internal/library/ > roundtrip.out 2>&1; status=$$?; \
	grep -E '^roundtrip:|^(ok|FAIL|---|panic)' roundtrip.out; exit $$status

e2e: ## Install browser deps if missing, then run only the browser tests
	./scripts/setup-e2e.sh
	$(GO) test -count=1 ./e2e/...

screenshots: ## Install browser deps if missing, then write docs/screenshots/*.png
	./scripts/setup-e2e.sh
	QUARRY_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestScreenshots(Phone)?$$' -v ./e2e/

bench: ## Install PostgreSQL if missing, then run every benchmark once, one package at a time (so no two compete for the 2 cores); prints the figure lines (full output in bench.out), PostgreSQL's next to SQLite's (docs/scaling.md)
	@./scripts/setup-postgres.sh || echo "postgres: setup failed, so its benchmarks skip (the other packages' still run)"
	@$(GO) test -p 1 -run '^$$' -bench . -benchtime=1x -benchmem -timeout 40m ./... > bench.out 2>&1; status=$$?; \
	grep -E '^[a-z]+: [a-z_0-9]+[= ]|^(FAIL|---|panic)' bench.out; exit $$status

fuzz: ## Run every Fuzz target for FUZZTIME each (default 10s)
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

chaos: ## Kill -9 the real binary at random moments TRIALS times (default 30); check no decision is lost, no step duplicated
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/web && $(GO) run ./cmd/chaos -bin $(BIN) -trials $(TRIALS)

release: ## Static binaries for linux/darwin/windows x amd64/arm64 into dist/, with SHA256SUMS (VERSION: git describe)
	GO=$(GO) ./scripts/release.sh

lint: ## go vet, gofmt and staticcheck
	$(GO) vet ./...
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) tool staticcheck ./...

check: generate ## Regenerate, fail if generated files or go.mod are stale, then lint
	@out=$$(git status --porcelain -- '*_templ.go'); \
	if [ -n "$$out" ]; then echo "generated files are out of date or uncommitted; run make generate and commit:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy; run go mod tidy and commit"; exit 1; }
	$(MAKE) --no-print-directory lint
