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

# Ginkgo label filter for `make windows`, e.g. LABELS='W3 && timed'.
LABELS ?=
STATE_ROOT ?= /var/lib/faultwin/state
# The ginkgo suites run in `make windows`, `make windows-podman` and `make mutants`;
# the Go tests of every other package run in two tiers: `make unit` (no root,
# nothing on the host: host tests skip there) and `make integration` (the
# packages that hold host tests, as root, one package at a time).
SUITES     = -e 'faultwin/windows' -e 'faultwin/windows/mutants' -e 'faultwin/windows/podman' -e 'faultwin/windows/containerd'
GO_PKGS    = $$($(GO) list ./... | grep -v -x $(SUITES))
HOST_PKGS  = $$(grep -rl --include='*_test.go' 'hosttest\.Need' . | xargs -n1 dirname | sort -u)

.PHONY: deps build lint unit integration test bench run windows windows-podman windows-containerd containerd-in-test podman-in-test hostcheck sweep soak replay report mutants clean

## deps: Debian packages, CRIU 4.2.1 (built from Debian's source package), Go modules, ginkgo CLI,
## crictl (the CRI client the containerd-cri windows drive containerd's CRI plugin with)
CRICTL         = /opt/faultwin/bin/crictl
CRICTL_VERSION = v1.37.0
deps:
	scripts/deps.sh
	scripts/install-criu.sh
	$(GO) mod download
	@if [[ -x $(GINKGO) ]] && $(GINKGO) version 2>/dev/null | grep -q "$(GINKGO_VERSION:v%=%)$$"; then \
	  echo "ginkgo: $(GINKGO_VERSION) already at $(GINKGO)"; \
	else \
	  GOBIN=$(BIN) $(GO) install github.com/onsi/ginkgo/v2/ginkgo && echo "ginkgo: installed $(GINKGO_VERSION)"; \
	fi
	@if [[ -x $(CRICTL) ]] && $(GO) version -m $(CRICTL) 2>/dev/null | grep -qE "^\s+mod\s+sigs.k8s.io/cri-tools\s+$(CRICTL_VERSION)\s"; then \
	  echo "crictl: $(CRICTL_VERSION) already at $(CRICTL)"; \
	else \
	  GOBIN=$(dir $(CRICTL)) $(GO) install sigs.k8s.io/cri-tools/cmd/crictl@$(CRICTL_VERSION) && echo "crictl: installed $(CRICTL_VERSION)"; \
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

## unit: the Go tests that need no root and touch nothing on the host, in parallel;
## host tests skip, naming `make integration`. Fails when zero tests ran.
unit:
	@mkdir -p $(OUT)
	FAULTWIN_TESTS=unit $(GO) test -count=1 -json $(GO_PKGS) > $(OUT)/unit.json || { \
	  $(GO) run ./scripts/testsummary < $(OUT)/unit.json; exit 1; }
	$(GO) run ./scripts/testsummary < $(OUT)/unit.json

## integration: the root Go tests (real namespaces, mounts, links, nftables, CRIU, the real
## supervisor), one package at a time (-p 1): they share host-global state (ip_forward, nft tables)
integration: build
	@mkdir -p $(OUT)
	$(GO) test -p 1 -count=1 -json $(HOST_PKGS) > $(OUT)/integration.json || { \
	  $(GO) run ./scripts/testsummary < $(OUT)/integration.json; exit 1; }
	$(GO) run ./scripts/testsummary < $(OUT)/integration.json

## hostcheck: refuse an unclean host, naming every leftover and how to clean it
hostcheck: build
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)

## sweep: clean this host with each dead run's own supervisor sweep
sweep: build
	$(FAULTWIN) sweep --state-root $(STATE_ROOT) --refsup $(REFSUP)
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)

# The ginkgo CLI at the version go.mod pins; `make windows` and `make mutants`
# need it, so they install it when `make deps` has not run.
$(GINKGO):
	GOBIN=$(BIN) $(GO) install github.com/onsi/ginkgo/v2/ginkgo

## windows: every registered window (or LABELS=...) through ginkgo, one row each into RESULTS
windows: build hostcheck $(GINKGO)
	@mkdir -p $(OUT)
	FAULTWIN_RESULTS=$(abspath $(RESULTS)) FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  $(GINKGO) run --fail-on-empty --require-suite -v --label-filter='$(LABELS)' \
	  --output-dir=$(OUT) --junit-report=windows-junit.xml --json-report=windows-report.json ./windows

## windows-podman: the podman windows (or LABELS=...) against real podman, conmon, runc and CRIU; rows into
## RESULTS (default out/podman.jsonl); fails when a verdict is not one windows/podman/expected/outcomes.yaml lists
PODMAN_RESULTS = $(if $(filter command line environment,$(origin RESULTS)),$(RESULTS),$(OUT)/podman.jsonl)
windows-podman: build hostcheck $(GINKGO)
	@mkdir -p $(OUT)
	@rm -f $(OUT)/podman-drift.txt
	FAULTWIN_RESULTS=$(abspath $(PODMAN_RESULTS)) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  FAULTWIN_DRIFT=$(DRIFT) FAULTWIN_DRIFT_FILE=$(OUT)/podman-drift.txt \
	  $(GINKGO) run --fail-on-empty --require-suite -v --timeout=20m --label-filter='$(LABELS)' \
	  --output-dir=$(OUT) --junit-report=podman-junit.xml --json-report=podman-report.json ./windows/podman

## windows-containerd: the containerd windows (or LABELS=...) against a real containerd (a daemon per run),
## its runc v2 shim, runc and CRIU; rows into RESULTS (default out/containerd.jsonl); fails when a verdict is
## not one windows/containerd/expected/outcomes.yaml lists
CONTAINERD_RESULTS = $(if $(filter command line environment,$(origin RESULTS)),$(RESULTS),$(OUT)/containerd.jsonl)
windows-containerd: build hostcheck $(GINKGO)
	@mkdir -p $(OUT)
	@rm -f $(OUT)/containerd-drift.txt
	FAULTWIN_RESULTS=$(abspath $(CONTAINERD_RESULTS)) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  FAULTWIN_DRIFT=$(DRIFT) FAULTWIN_DRIFT_FILE=$(OUT)/containerd-drift.txt \
	  $(GINKGO) run --fail-on-empty --require-suite -v --timeout=20m --label-filter='$(LABELS)' \
	  --output-dir=$(OUT) --junit-report=containerd-junit.xml --json-report=containerd-report.json ./windows/containerd

# DRIFT=warn reports a podman verdict expected/outcomes.yaml does not list
# instead of failing on it; make test sets it (see windows/podman).
DRIFT ?=

## test: everything CI runs: unit and integration tests, every window (refsup, podman, containerd), every mutant,
## replay of results/
test: deps lint build hostcheck unit integration windows podman-in-test containerd-in-test mutants replay

# The podman windows as make test runs them: every window must run and none
# may be ERROR; a drifted verdict is listed in out/podman-drift.txt.
podman-in-test:
	$(MAKE) windows-podman DRIFT=warn
	@if [[ -s $(OUT)/podman-drift.txt ]]; then echo "podman: verdicts not seen before (findings to review, not failures):"; cat $(OUT)/podman-drift.txt; else echo "podman: every verdict as expected/outcomes.yaml lists"; fi

# The containerd windows as make test runs them, as podman-in-test does.
containerd-in-test:
	$(MAKE) windows-containerd DRIFT=warn
	@if [[ -s $(OUT)/containerd-drift.txt ]]; then echo "containerd: verdicts not seen before (findings to review, not failures):"; cat $(OUT)/containerd-drift.txt; else echo "containerd: every verdict as expected/outcomes.yaml lists"; fi

## bench: one pass of the refsup windows, the podman landing windows and some containerd windows, then the
## ratios side by side (snapshot vs its shell equivalent, refsup's checkpoint and restore vs CRIU on the same
## sessions, harness share per driver, recovery vs its calls, replay throughput); docs/performance.md
bench: build hostcheck
	@mkdir -p $(OUT)
	rm -f $(OUT)/bench-refsup.jsonl $(OUT)/bench-podman.jsonl $(OUT)/bench-containerd.jsonl
	$(FAULTWIN) run --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(OUT)/bench-refsup.jsonl >/dev/null || true
	$(FAULTWIN) run --windows windows/podman --label-filter landing --state-root $(STATE_ROOT) --results $(OUT)/bench-podman.jsonl >/dev/null || true
	$(FAULTWIN) run --windows windows/containerd --label-filter 'CS1 || CK1 || CE1 || CP3' --state-root $(STATE_ROOT) --results $(OUT)/bench-containerd.jsonl >/dev/null || true
	$(GO) run ./scripts/bench --state-root $(STATE_ROOT) --faultwin $(FAULTWIN) --refsup $(REFSUP) \
	  $(OUT)/bench-refsup.jsonl $(OUT)/bench-podman.jsonl $(OUT)/bench-containerd.jsonl

## run: the main job for a newcomer: install, build, check the host, run the windows of windows/*.yaml
## (the podman windows under windows/podman are not among them: make windows-podman; faultwin run names them)
run: deps build
	$(FAULTWIN) doctor
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)
	$(FAULTWIN) run --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(RESULTS) \
	  $(if $(LABELS),--label-filter='$(LABELS)')

## replay: re-judge every checked-in row without root; fails on any difference or broken chain
replay: build
	$(FAULTWIN) replay $$(find results -name '*.jsonl' -o -name '*.jsonl.gz' | sort)

## report: Markdown and self-contained HTML of every rows file under results/ (any subdirectory,
## found when it runs; results/logs/ is not rows) into out/, grouped by supervisor; the mutants'
## rows (bugs planted on purpose) are a group apart and do not decide the exit status
REPORT_DIRS = results/
report: build
	@mkdir -p $(OUT)
	rc=0; $(FAULTWIN) report --out $(OUT)/report.md $(REPORT_DIRS) || rc=$$?; \
	$(FAULTWIN) report --format html --out $(OUT)/report.html $(REPORT_DIRS) || rc=$$?; \
	echo "report: $(OUT)/report.md $(OUT)/report.html (from $(REPORT_DIRS))"; exit $$rc

## soak: N (default 20) full passes of the windows (or LABELS=...), k/N per window with Wilson intervals
N ?= 20
soak: build hostcheck
	@mkdir -p $(OUT)
	rc=0; $(FAULTWIN) soak -n $(N) --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(OUT)/soak.jsonl \
	  $(if $(LABELS),--label-filter '$(LABELS)') || rc=$$?; \
	$(FAULTWIN) report --format html --out $(OUT)/soak.html $(OUT)/soak.jsonl || true; exit $$rc

## mutants: every criterion shown to fail on a refsup with the bug it guards against
MUTANT_RESULTS ?= $(OUT)/mutants
mutants: build hostcheck $(GINKGO)
	@mkdir -p $(MUTANT_RESULTS)
	FAULTWIN_MUTANT_RESULTS=$(abspath $(MUTANT_RESULTS)) FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  $(GINKGO) run --fail-on-empty --require-suite -v --label-filter=mutant \
	  --output-dir=$(OUT) --junit-report=mutants-junit.xml ./windows/mutants

## image: localhost/faultwin:nightly, what the nightly soak's pods run (deploy/image/build.sh: a debootstrap
## base imported into podman and kept, then HEAD's clone built with make build, CRIU 4.2.1 and the runtime
## packages); docs/soak.md, "The image"
.PHONY: image image-test
image:
	deploy/image/build.sh

## image-test: the image's test alone (make integration runs it too): make image, then faultwin doctor and
## window W1 in it under podman, privileged in the host's pid namespace
image-test:
	$(GO) test -count=1 -v -run '^TestImageRuns$$' ./cmd/faultwin

clean:
	rm -rf $(BIN) $(OUT)
