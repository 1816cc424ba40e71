# plasmd build entry points. The engine targets keep the committed
# runtime/enginewasm/engine.wasm in step with the guest sources.

GO           ?= go
ENGINE_WASM  := runtime/enginewasm/engine.wasm
ENGINE_PKG   := ./guest/cmd/engine
# -trimpath and -buildvcs=false make the module a pure function of the
# sources and the toolchain, so check-engine can compare bytes.
WASM_BUILD   := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -buildvcs=false

.PHONY: engine check-engine build test bench lint

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

build:
	$(GO) build -o bin/plasmd ./cmd/plasmd

test: check-engine
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt -l reports:" >&2; echo "$$out" >&2; exit 1; fi
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./guest/...
