# plasmd build entry points. The engine targets keep the committed
# internal/runtime/enginewasm/engine.wasm in step with the guest sources.

GO           ?= go
ENGINE_WASM  := internal/runtime/enginewasm/engine.wasm
ENGINE_PKG   := ./guest/cmd/engine
# -trimpath and -buildvcs=false make the module a pure function of the
# sources and the toolchain, so check-engine can compare bytes.
WASM_BUILD   := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -buildvcs=false

# Vendor modules committed beside demo catalogs: catalog dir → source package.
LEDGER_DIR   := demo/catalogs/ledger
LEDGER_PKG   := ./guest/examples/signer

.PHONY: engine check-engine modules check-modules build run test bench lint diff chromium loadtest

engine:
	$(WASM_BUILD) -o $(ENGINE_WASM) $(ENGINE_PKG)

check-engine:
	@tmp=$$(mktemp "$${TMPDIR:-/tmp}/engine.XXXXXX.wasm") || exit 1; \
	trap 'rm -f "$$tmp"' EXIT; \
	$(WASM_BUILD) -o "$$tmp" $(ENGINE_PKG) || exit 1; \
	if ! cmp -s "$$tmp" $(ENGINE_WASM); then \
		echo "engine.wasm is stale: run make engine" >&2; \
		exit 1; \
	fi

# modules rebuilds the demo vendor module and re-pins its sha256 in the
# catalog's domain.yaml.
modules:
	$(WASM_BUILD) -o $(LEDGER_DIR)/module.wasm $(LEDGER_PKG)
	@sum=$$(sha256sum $(LEDGER_DIR)/module.wasm | cut -d' ' -f1) && \
	sed -i.bak -E "s/^(  sha256: )[0-9a-f]{64}$$/\1$$sum/" $(LEDGER_DIR)/domain.yaml && \
	rm -f $(LEDGER_DIR)/domain.yaml.bak && echo "pinned $$sum in $(LEDGER_DIR)/domain.yaml"

# check-modules fails when a committed module.wasm is not what its sources
# build to, or when domain.yaml pins other bytes.
check-modules:
	@tmp=$$(mktemp "$${TMPDIR:-/tmp}/module.XXXXXX.wasm") || exit 1; \
	trap 'rm -f "$$tmp"' EXIT; \
	$(WASM_BUILD) -o "$$tmp" $(LEDGER_PKG) || exit 1; \
	if ! cmp -s "$$tmp" $(LEDGER_DIR)/module.wasm; then \
		echo "$(LEDGER_DIR)/module.wasm is stale: run make modules" >&2; \
		exit 1; \
	fi; \
	sum=$$(sha256sum $(LEDGER_DIR)/module.wasm | cut -d' ' -f1); \
	if ! grep -qE "^  sha256: $$sum$$" $(LEDGER_DIR)/domain.yaml; then \
		echo "$(LEDGER_DIR)/domain.yaml does not pin module.wasm ($$sum): run make modules" >&2; \
		exit 1; \
	fi

build:
	$(GO) build -o bin/plasmd ./cmd/plasmd

# run serves the embedded demo (tracker REST, kanban GraphQL, ledger with a
# vendor module) on 127.0.0.1:8787: HTTP /execute and MCP at /mcp.
run: build
	./bin/plasmd serve --demo --cache-dir .cache/wasm $(ARGS)

# chromium installs Debian's headless browser for the console's browser
# test (server/internal/console/browser) when it is missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core; }

# test is what CI runs: formatting and vet, committed Wasm up to date, then
# every test with the race detector (the console's browser test needs
# chromium; the shared-store tests need redis-server; the MCP client test
# needs node and the SDK's npm packages).
#
# go test starts packages in the order it is given them, two at a time on
# a 2-core machine; in ./...'s alphabetical order the server tests, the
# longest, started last and ran alone at the end. SLOW_PKGS start first
# (longest first) and ./... adds the rest; go test runs each package once.
SLOW_PKGS := ./server/ ./internal/runtime/sandbox/ ./cmd/plasmd/ ./server/internal/core/ \
	./internal/refbackend/ ./server/internal/console/browser/ ./internal/runtime/wasmmeter/
test: lint check-engine check-modules diff chromium redis-server mcpclient
	PLASMD_REQUIRE_REDIS=1 PLASMD_REQUIRE_NODE=1 $(GO) test -race -timeout 30m $(SLOW_PKGS) ./...

# mcpclient installs the TypeScript MCP SDK, pinned by package-lock.json,
# for cmd/plasmd's TestTypeScriptSDKClient (a real MCP client we did not
# write, run against plasmd over stdio and Streamable HTTP) into the
# gitignored node_modules beside its script; npm ci runs again only when
# the lock changes. Node.js and npm come from Debian when missing; under
# make test the test then fails rather than skips without them.
MCPCLIENT_DIR := cmd/plasmd/testdata/mcpclient
.PHONY: mcpclient
mcpclient: $(MCPCLIENT_DIR)/node_modules/.installed
$(MCPCLIENT_DIR)/node_modules/.installed: $(MCPCLIENT_DIR)/package.json $(MCPCLIENT_DIR)/package-lock.json
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null 2>&1 || { echo "node and npm are missing and apt-get is not available" >&2; exit 1; }; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends nodejs npm; \
	}
	cd $(MCPCLIENT_DIR) && npm ci --no-audit --no-fund
	@touch $@

# redis-server backs the shared-store tests (each test starts its own on a
# loopback port). Debian's package is installed when it is missing; under
# make test the tests then fail rather than skip without it.
.PHONY: redis-server
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
		command -v apt-get >/dev/null 2>&1 || { echo "redis-server is missing and apt-get is not available" >&2; exit 1; }; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends redis-server; \
	}

# rust-wasm installs Debian's Rust compiler with its wasm32 standard
# library and linker for bench/'s BenchmarkRustWasm (the Go calibration
# workloads written in Rust: what a guest costs when Go did not compile
# it). rustup's toolchains usually carry only the host target and cannot
# fetch another from these machines; the benchmark skips without one.
.PHONY: rust-wasm
rust-wasm:
	@[ -d "$$(/usr/bin/rustc --print sysroot 2>/dev/null)/lib/rustlib/wasm32-unknown-unknown" ] || { \
		command -v apt-get >/dev/null 2>&1 || { echo "Debian's rustc with libstd-rust-dev-wasm32 is missing and apt-get is not available" >&2; exit 1; }; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends rustc libstd-rust-dev-wasm32 lld; \
	}

# diff runs the differential test at full size: generated programs over the
# reference backend (every pagination style, REST and GraphQL) must answer
# exactly as the oracle does, or be refused by the run budget. Seeded and
# reproducible; without -race, since it is sized in programs, not in time.
DIFF_PROGRAMS ?= 2100
diff:
	PLASMD_DIFF_PROGRAMS=$(DIFF_PROGRAMS) $(GO) test -count=1 -timeout 15m -run 'TestDifferential' ./internal/refbackend/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# loadtest replays issue 10's attacks (large catalog, session memory,
# borrowed secrets, MCP session floods and hijacks, log floods, DNS to
# loopback, memory per active tenant) against loopback servers and prints
# what each defence did, then the CPU-share benchmark. Bounded in count
# and time; nothing leaves the machine.
loadtest:
	$(GO) test -tags loadtest -run '^TestLoadAttacks$$' -count=1 -v -timeout 10m ./server/ | grep -E '^\s+loadtest_test.go|^(---|ok|FAIL)'
	$(GO) test -run '^$$' -bench 'BenchmarkNeighbourShare' -benchtime 1x -timeout 10m ./internal/runtime/sandbox/

lint:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt -l reports:" >&2; echo "$$out" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) run ./internal/sizecheck
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./guest/... ./internal/engine/... ./internal/model/...

# bench-extism compares call overhead with Extism's Go SDK. It lives in its
# own module (bench/) so the main module never depends on Extism, which also
# keeps it out of `make test` and `make bench` (./... stops at bench/go.mod).
.PHONY: bench-extism
bench-extism: rust-wasm
	cd bench && $(GO) test -run '^$$' -bench . -benchmem
