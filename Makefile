# faultwin: `make run` is the main job, `make test` is everything CI runs.
# Both need root on Linux (namespaces, overlayfs, veth, nftables, CRIU).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := /usr/local/go/bin:$(PATH)
export GOFLAGS := -mod=mod

GO      ?= go
BIN     := $(CURDIR)/bin
OUT     := $(CURDIR)/out
GINKGO  := $(BIN)/ginkgo
FAULTWIN:= $(BIN)/faultwin
REFSUP  := $(BIN)/refsup
# Where a run's rows go; `make windows RESULTS=results/my.jsonl` to choose.
RESULTS ?= $(OUT)/windows.jsonl
GINKGO_VERSION := $(shell awk '$$1=="github.com/onsi/ginkgo/v2"{print $$2}' go.mod)

.PHONY: deps build lint unit test run windows hostcheck sweep soak replay report mutants clean

## deps: Debian packages, CRIU 4.2.1 (built from Debian's source package), Go modules, ginkgo CLI
deps:
	scripts/deps.sh
	scripts/install-criu.sh
	$(GO) mod download
	@if [[ -x $(GINKGO) ]] && $(GINKGO) version 2>/dev/null | grep -q "$(GINKGO_VERSION:v%=%)$$"; then \
	  echo "ginkgo: $(GINKGO_VERSION) already at $(GINKGO)"; \
	else \
	  GOBIN=$(BIN) $(GO) install github.com/onsi/ginkgo/v2/ginkgo && echo "ginkgo: installed $(GINKGO_VERSION)"; \
	fi

## build: the faultwin CLI and the reference supervisor into bin/
build:
	$(GO) build -o $(FAULTWIN) ./cmd/faultwin
	@if [[ -f cmd/refsup/main.go ]]; then $(GO) build -o $(REFSUP) ./cmd/refsup; fi

## lint: go vet and gofmt
lint:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [[ -n $$unformatted ]]; then echo "gofmt would change: $$unformatted"; exit 1; fi

## unit: every Go test (unit tests and the real, root-only integration tests);
## fails when zero tests ran
unit: build
	@mkdir -p $(OUT)
	$(GO) test -count=1 -json ./... > $(OUT)/gotest.json || { \
	  $(GO) run ./scripts/testsummary < $(OUT)/gotest.json; exit 1; }
	$(GO) run ./scripts/testsummary < $(OUT)/gotest.json

## test: everything CI runs
test: deps lint build unit

## run: the main job for a newcomer: install, build, check the host, run every window
run: deps build
	$(FAULTWIN) doctor

## not yet built: these exit non-zero until their issues land
windows soak replay report mutants:
	@echo "make $@: not there yet (see the project's open issues)"; exit 1

clean:
	rm -rf $(BIN) $(OUT)
