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
# The ginkgo suites run in `make windows`, `make windows-<name>`, `make smoke` and `make mutants`;
# the Go tests of every other package run in two tiers: `make unit` (no root,
# nothing on the host: host tests skip there) and `make integration` (the
# packages that hold host tests, as root, one package at a time).
# A ginkgo suite is a package with a *_suite_test.go; every other package is in the Go tiers.
SUITES     = $$(find windows -name '*_suite_test.go' -printf 'faultwin/%h\n' | sed 's/^/-e /')
GO_PKGS    = $$($(GO) list ./... | grep -v -x $(SUITES))
HOST_PKGS  = $$(grep -rl --include='*_test.go' 'hosttest\.Need' . | xargs -n1 dirname | sort -u)

.PHONY: deps build lint unit integration test bench run windows smoke nightly nightly-described nightly-slow repro latest patched ab-patched hostcheck sweep soak replay report mutants mutants-all clean

## deps: Debian packages, CRIU 4.2.1 (built from Debian's source package), Go modules, ginkgo CLI,
## crictl (the CRI client the containerd-cri windows drive containerd's CRI plugin with),
## actionlint (TestActionlint lints .github/workflows with it)
CRICTL         = /opt/faultwin/bin/crictl
CRICTL_VERSION = v1.37.0
ACTIONLINT         = $(BIN)/actionlint
ACTIONLINT_VERSION = v1.7.12
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
	@if [[ -x $(ACTIONLINT) ]] && [[ $$($(ACTIONLINT) -version 2>/dev/null | head -1) == "$(ACTIONLINT_VERSION)" ]]; then \
	  echo "actionlint: $(ACTIONLINT_VERSION) already at $(ACTIONLINT)"; \
	else \
	  GOBIN=$(BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) && echo "actionlint: installed $(ACTIONLINT_VERSION)"; \
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
	FAULTWIN_TESTS=unit $(GO) test -count=1 -vet=off -json $(GO_PKGS) > $(OUT)/unit.json || { \
	  $(GO) run ./scripts/testsummary < $(OUT)/unit.json; exit 1; }
	$(GO) run ./scripts/testsummary < $(OUT)/unit.json

## integration: the root Go tests (real namespaces, mounts, links, nftables, CRIU, the real
## supervisor), one package at a time (-p 1): they share host-global state (ip_forward, nft tables).
## The image's test is make nightly's (make image-test); go vet is make lint's, so neither tier repeats it.
## A package's tests may take 30 min: cmd/faultwin's try every shipped description and run the tutorial's commands.
## Right after make unit in one make test or nightly (AFTER_UNIT=1), only the tests the unit tier skipped run
## (the host tests: hosttest.Need skips them there); the others ran already, as root in CI
HOST_IMPORTS = $$(printf 'faultwin/%s\n' $(HOST_PKGS) | sed 's|/\./|/|')
integration: build
	@mkdir -p $(OUT)
	run=""; if [[ -n "$${AFTER_UNIT:-}" ]]; then run=$$($(GO) run ./scripts/testsummary --skipped $(OUT)/unit.json $(HOST_IMPORTS)); fi; \
	$(GO) test -p 1 -count=1 -vet=off -timeout 30m $${run:+-run "$$run"} -skip '^TestImageRuns$$' -json $(HOST_PKGS) > $(OUT)/integration.json || { \
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

# The windows suite, compiled once for a make test (scripts/timed makes it once a run, like build):
# windows, smoke and windows-<name> run this binary, which ginkgo runs from its own directory as it
# would run the package.
WINDOWS_TEST := windows/windows.test
.PHONY: windows-suite
windows-suite: $(GINKGO)
	$(GINKGO) build -o $(CURDIR)/$(WINDOWS_TEST) ./windows >/dev/null

## windows: every registered window (or LABELS=...) through ginkgo, one row each into RESULTS (written anew)
windows: build hostcheck windows-suite
	@mkdir -p $(OUT)
	rm -f $(RESULTS)
	FAULTWIN_RESULTS=$(abspath $(RESULTS)) FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  $(GINKGO) run --fail-on-empty --require-suite -v --label-filter='refsup$(if $(LABELS), && ($(LABELS)))' \
	  --output-dir=$(OUT) --junit-report=windows-junit.xml --json-report=windows-report.json ./$(WINDOWS_TEST) \
	  || { $(call not_passed,$(abspath $(RESULTS))); exit 1; }

# not_passed prints a failed suite's rows that did not pass, one line each
# with the failed criteria's evidence under it, so the tail of a CI log says
# what failed and why (the ginkgo report above it is long).
not_passed = echo "rows that did not pass, in $(1):"; $(FAULTWIN) rows --brief --status FAIL,INVALID,ERROR $(1) | tail -60

# The described supervisors' suites: every windows/<name>/ with recorded
# outcomes (expected/outcomes.yaml, learned by `faultwin expect`), so a
# supervisor added later is in make smoke and make nightly with no edit here.
DESCRIBED := $(patsubst windows/%/expected/outcomes.yaml,%,$(wildcard windows/*/expected/outcomes.yaml))

## windows-<name> (any DESCRIBED suite): one pass of a described supervisor's windows
## (or LABELS=...) against the real supervisor; rows into out/<name>.jsonl. Fails on an ERROR, a window
## that measured nothing, a smoke window whose status its soak never showed, or a statistically
## supported drift of the pass's rows from the recorded soak (faultwin drift)
windows-%: build hostcheck windows-suite
	@test -f windows/$*/expected/outcomes.yaml || { echo "windows-$*: no windows/$*/expected/outcomes.yaml (suites: $(DESCRIBED))"; exit 64; }
	@mkdir -p $(OUT)
	rm -f $(OUT)/$*.jsonl
	FAULTWIN_RESULTS_DIR=$(OUT) FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  $(GINKGO) run --fail-on-empty --require-suite -v --timeout=40m --label-filter='$*$(if $(LABELS), && ($(LABELS)))' \
	  --output-dir=$(OUT) --junit-report=$*-junit.xml --json-report=$*-report.json ./$(WINDOWS_TEST) \
	  || { $(call not_passed,$(OUT)/$*.jsonl); exit 1; }
	$(FAULTWIN) drift --windows windows/$* $(OUT)/$*.jsonl

## smoke: the smoke set of every described supervisor (make test runs it): its descriptions load, their
## requires hold, and per operation its most stable window runs end to end, failing on a status its
## soak never showed; rows into out/smoke-<name>.jsonl
smoke: build hostcheck windows-suite
	@mkdir -p $(OUT)
	@test -n "$(DESCRIBED)" || { echo "smoke: no described suite (windows/*/expected/outcomes.yaml)"; exit 1; }
	@for d in $(DESCRIBED); do \
	  rm -f $(OUT)/smoke-$$d.jsonl; \
	  echo "smoke: $$d"; \
	  FAULTWIN_RESULTS_DIR=$(OUT) FAULTWIN_RESULTS_PREFIX=smoke- FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	    $(GINKGO) run --fail-on-empty --require-suite --label-filter="$$d && smoke" --timeout=10m \
	    --output-dir=$(OUT) --junit-report=smoke-$$d-junit.xml ./$(WINDOWS_TEST) \
	    || { $(call not_passed,$(OUT)/smoke-$$d.jsonl); exit 1; }; \
	done

## test: what CI runs (.ci/run): lint, build, the unit and integration tiers, every refsup window
## and the smoke set of every described supervisor beside a user's own containers (neighbours-up),
## every mutant, the replay of results/; ends with the time each target took. The full suites are
## make nightly.
TEST_TARGETS = deps lint build hostcheck unit integration neighbours-up windows-suite windows smoke neighbours-check neighbours-down mutants replay
test:
	trap 'scripts/neighbours.sh down' EXIT; AFTER_UNIT=1 scripts/timed $(TEST_TARGETS)

## neighbours-up, neighbours-check, neighbours-down: a user's own podman container on podman0, Docker
## container on docker0, containerd task, veth pair and bridge, and a process forking ~100 times a
## second, beside the windows (scripts/neighbours.sh); check runs the sweep hostcheck advises, then fails
## when any of them is gone, changed (links by ifindex, netns by inode, nft chains by handle, shim
## sockets by inode) or no longer answers an exec, or when hostcheck does not say clean
.PHONY: neighbours-up neighbours-check neighbours-down
neighbours-up: build
	scripts/neighbours.sh up
neighbours-check: build
	$(FAULTWIN) sweep --reclaim-names --state-root $(STATE_ROOT)
	scripts/neighbours.sh check
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)
neighbours-down:
	scripts/neighbours.sh down

## nightly: every window of every supervisor, the slow host tests and the image: what make test runs,
## then NIGHTLY_N passes (default 3) of each described supervisor's windows as a soak, failing on a
## statistically supported drift from its recorded soak (faultwin drift, naming the rows to look at),
## then the harness killed 20 times and the image test
NIGHTLY_N ?= 3
nightly:
	AFTER_UNIT=1 scripts/timed $(patsubst mutants,mutants-all,$(TEST_TARGETS)) nightly-described nightly-slow repro

## repro: every reproduction without faultwin (scripts/repro/*.sh: a supervisor's own CLI, a /proc poll, kill -9,
## the symptom printed) REPRO_N times, k/N each, each script's transcript written to docs/findings/transcripts
## (REPRO_ONLY=name runs one, REPRO_TAG=v1.5.3 names the transcript for another build, which RUNC=, BIN_DIR=,
## PODMAN= or OCI_RUNTIME= picks); fails only when a script cannot set up (nightly tier)
REPRO_N ?= 10
repro:
	scripts/repro/run.sh $(REPRO_N)

nightly-described: build hostcheck
	@mkdir -p $(OUT)/nightly
	@failed=""; for d in $(DESCRIBED); do \
	  rm -f $(OUT)/nightly/$$d.jsonl; \
	  echo "nightly: $(NIGHTLY_N) passes of windows/$$d"; \
	  rc=0; $(FAULTWIN) soak -n $(NIGHTLY_N) --windows windows/$$d --state-root $(STATE_ROOT) --results $(OUT)/nightly/$$d.jsonl || rc=$$?; \
	  if ((rc != 0 && rc != 1 && rc != 2)); then echo "nightly: windows/$$d: soak exit $$rc (an ERROR, or the host left unclean)"; exit $$rc; fi; \
	  $(FAULTWIN) drift --windows windows/$$d $(OUT)/nightly/$$d.jsonl || failed="$$failed $$d"; \
	done; \
	if [[ -n $$failed ]]; then echo "nightly: drift in:$$failed (out/nightly/<name>.jsonl; the lines marked ! above name the rows)"; exit 1; fi

## latest: the newest releases of the components that are Go modules, built beside Debian's at pinned versions
## (scripts/install-latest.sh), then on every variant of drivers/described/variants the windows labelled finding
## of the supervisor it varies, LATEST_N passes each, into out/latest/ (scripts/latest.sh): does a finding still
## show on the newest release?
LATEST_N ?= 10
latest: build hostcheck
	scripts/install-latest.sh
	FAULTWIN=$(FAULTWIN) STATE_ROOT=$(STATE_ROOT) scripts/latest.sh $(LATEST_N)

## patched: each patch under docs/findings/patches built with its release, alike, each alone in a directory of
## /opt/faultwin/ab (scripts/install-patched.sh: runc v1.5.3 and v1.5.3 + runc-delete-through-mount.patch;
## containerd v2.4.2 and v2.4.2 + ctr-checkpoint-pause-record.patch;
## with PODMAN_SRC a checkout at v5.8.2, podman v5.8.2 and v5.8.2 + podman-restore-save-first.patch);
## ab-patched: the finding's windows with their controls on both, AB_N passes alternating, into AB_RESULTS
## (scripts/ab-patched.sh; AB_WRAP='flock FILE' holds a shared host one arm's pass at a time; AB_DIR, AB_WINDOWS
## and AB_ARMS pick another finding's: scripts/ab-patched.sh says how)
AB_N ?= 5
AB_RESULTS ?= $(OUT)/runc-ab.jsonl.gz
patched:
	scripts/install-patched.sh
ab-patched: build patched
	FAULTWIN=$(FAULTWIN) STATE_ROOT=$(STATE_ROOT) AB_RESULTS=$(AB_RESULTS) scripts/ab-patched.sh $(AB_N)

nightly-slow: build
	FAULTWIN_HARNESS_KILLS=20 $(GO) test -count=1 -v -run '^TestHarnessKilled$$' ./cmd/faultwin
	$(MAKE) image-test

## bench: one pass of the refsup windows and of every described supervisor's smoke set, then the ratios side
## by side (snapshot vs its shell equivalent, refsup's checkpoint and restore vs CRIU on the same sessions,
## harness share per driver, recovery vs its calls, replay throughput, replay and report of results/ beside BENCH_BASE's: make bench-reports); then the refsup pass again with
## BUSY busy loops beside it (scripts/busy.sh, killed whatever happens) and both passes' verdicts side by side
## (scripts/loadpair): fails when a verdict moved with the load, other than an INVALID the load explains.
## BENCH_LABELS='W3X' limits both refsup passes to those windows; docs/performance.md
BUSY ?= 2
BENCH_LABELS ?=
bench: build hostcheck $(GINKGO) $(BIN)/faultwin.base
	@mkdir -p $(OUT)
	rm -f $(OUT)/bench-*.jsonl $(OUT)/loaded-refsup.jsonl
	$(FAULTWIN) run --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(OUT)/bench-refsup.jsonl \
	  $(if $(BENCH_LABELS),--label-filter '$(BENCH_LABELS)') >/dev/null || true
	@for d in $(DESCRIBED); do \
	  echo "bench: the smoke set of $$d"; \
	  FAULTWIN_RESULTS_DIR=$(OUT) FAULTWIN_RESULTS_PREFIX=bench- FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	    $(GINKGO) run --label-filter="$$d && smoke" --timeout=10m ./windows >/dev/null || true; \
	done
	$(GO) run ./scripts/bench --state-root $(STATE_ROOT) --faultwin $(FAULTWIN) --refsup $(REFSUP) --base $(BIN)/faultwin.base $(OUT)/bench-*.jsonl
	scripts/busy.sh $(BUSY) $(FAULTWIN) run --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(OUT)/loaded-refsup.jsonl \
	  $(if $(BENCH_LABELS),--label-filter '$(BENCH_LABELS)') >/dev/null || true
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)
	$(GO) run ./scripts/loadpair $(OUT)/bench-refsup.jsonl $(OUT)/loaded-refsup.jsonl

## bench-reports: `faultwin replay results/` and `faultwin report results/` (the HTML page), 3 rounds of this
## build alternated with BENCH_BASE's (default HEAD~1; BENCH_BASE=main, a tag, a commit), medians side by side:
## wall clock, CPU, peak RSS, the page's bytes, and this/base. No root, nothing on the host; docs/performance.md
BENCH_BASE ?= HEAD~1
.PHONY: bench-reports $(BIN)/faultwin.base
bench-reports: build $(BIN)/faultwin.base
	$(GO) run ./scripts/bench --reports --faultwin $(FAULTWIN) --base $(BIN)/faultwin.base

# faultwin built from BENCH_BASE's tree (git archive), beside this one
$(BIN)/faultwin.base:
	@base=$$(mktemp -d); trap 'rm -rf "$$base"' EXIT; \
	git archive $$(git rev-parse --verify '$(BENCH_BASE)^{commit}') | tar -x -C "$$base"; \
	(cd "$$base" && $(GO) build -o $(BIN)/faultwin.base ./cmd/faultwin); \
	echo "bench: $(BIN)/faultwin.base is $(BENCH_BASE) ($$(git rev-parse --short '$(BENCH_BASE)^{commit}'))"

## run: the main job for a newcomer: install, build, check the host, run the refsup windows of windows/refsup/*.yaml
## (a described supervisor's windows under windows/<name>/ are not among them: make windows-<name>; faultwin run names them)
run: deps build
	$(FAULTWIN) doctor
	$(FAULTWIN) hostcheck --state-root $(STATE_ROOT)
	$(FAULTWIN) run --state-root $(STATE_ROOT) --refsup $(REFSUP) --results $(RESULTS) \
	  $(if $(LABELS),--label-filter='$(LABELS)')

## replay: re-judge every checked-in row without root; fails on any difference or broken chain
replay: build
	$(FAULTWIN) replay results/

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

## mutants: every criterion shown to fail on a refsup with the bug it guards against, by the fewest
## mutant specs that fail them all (label cover: 10 of 28); mutants-all (make nightly): every known-bug
## switch and control of the table (docs/mutants.md)
MUTANT_RESULTS ?= $(OUT)/mutants
MUTANT_LABELS ?= mutant && cover
mutants: build hostcheck $(GINKGO)
	@mkdir -p $(MUTANT_RESULTS)
	FAULTWIN_MUTANT_RESULTS=$(abspath $(MUTANT_RESULTS)) FAULTWIN_REFSUP=$(REFSUP) FAULTWIN_STATE_ROOT=$(STATE_ROOT) \
	  $(GINKGO) run --fail-on-empty --require-suite -v --label-filter='$(MUTANT_LABELS)' \
	  --output-dir=$(OUT) --junit-report=mutants-junit.xml ./windows/mutants
mutants-all:
	$(MAKE) mutants MUTANT_LABELS=mutant

## cluster-test: the shipped soak Job (2 shards over W1, one pass) and merge Job on a one-node Kubernetes
## v1.34 built here from the Go module proxy, then the host compared with before it (scripts/cluster/test.sh;
## docs/soak.md, "A cluster of one node"). Takes the host lock itself: never run it under flock, nor beside
## windows. Binaries and images cached under /var/cache/faultwin/cluster; results and logs in out/cluster
.PHONY: cluster-test
cluster-test: build
	scripts/cluster/test.sh

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
	rm -rf $(BIN) $(OUT) $(WINDOWS_TEST)
