# codegenie — see README.md. Every target needs nothing but Go.
GO ?= go
STATICCHECK_VERSION := v0.8.2
ACTIONLINT_VERSION := v1.7.12
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 5s

.PHONY: check test gate bench fuzz fmt vet cross-vet staticcheck tidy-check race detvet actionlint

check: fmt vet cross-vet staticcheck tidy-check detvet actionlint race

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# cross-vet: the packages users import (with their commands) and every
# package with code of its own per system build and vet for the other
# systems Go users work on. The rest (the sample pipeline, the test
# helpers, the SDK conformance tests) are not vetted again: the recipe
# checks that each has the same files on every system and imports neither
# syscall, golang.org/x/sys nor unsafe, so what vet sees of them (their
# files, and the in-module and SDK APIs they use, which are the same on
# every system) cannot differ by system; vetting them again would only
# compile the LLM SDKs their tests use twice more.
CROSS_VET := ./cassettes/... ./events/... ./harness/... ./bundle/... ./gate/... ./ledger/... ./guard/... ./detvet/... ./cmd/... \
	./internal/atomicfile ./internal/childproc ./internal/pgtest
CROSS_FILES := {{.ImportPath}}:{{range .GoFiles}} {{.}}{{end}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}:{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}

cross-vet:
	GOOS=windows $(GO) vet $(CROSS_VET)
	GOOS=darwin $(GO) vet $(CROSS_VET)
	@rest=$$($(GO) list ./... | grep -vxF "$$($(GO) list $(CROSS_VET))"); \
	linux=$$(GOOS=linux $(GO) list -f '$(CROSS_FILES)' $$rest) || exit 1; \
	for goos in windows darwin; do \
		other=$$(GOOS=$$goos $(GO) list -f '$(CROSS_FILES)' $$rest) || exit 1; \
		if [ "$$other" != "$$linux" ]; then \
			echo "cross-vet: these packages have other files for $$goos; add them to CROSS_VET:"; \
			echo "$$other" | grep -vxF "$$linux" | cut -d: -f1; exit 1; fi; \
	done; \
	bad=$$(echo "$$linux" | awk -F: '$$3 ~ / (syscall|unsafe|golang\.org\/x\/sys\/[^ ]*)( |$$)/ { print $$1 }'); \
	if [ -n "$$bad" ]; then echo "cross-vet: these packages use system-specific APIs; add them to CROSS_VET:"; echo "$$bad"; exit 1; fi

staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

# tidy-check keeps its copies in a folder of its own, so that two checks
# on one machine do not restore each other's go.mod.
tidy-check:
	@bak=$$(mktemp -d); cp go.mod go.sum "$$bak"/; \
	echo "$(GO) mod tidy"; $(GO) mod tidy || { rm -rf "$$bak"; exit 1; }; \
	if ! cmp -s go.mod "$$bak"/go.mod || ! cmp -s go.sum "$$bak"/go.sum; then \
		echo "go mod tidy changed go.mod/go.sum; run 'go mod tidy' and commit"; \
		cp "$$bak"/go.mod "$$bak"/go.sum .; rm -rf "$$bak"; exit 1; fi; \
	rm -rf "$$bak"

# detvet: the static determinism analyzer over every package of the
# module (-pkgs=. selects them all, not only detvet.DefaultPackages): the
# pipeline packages, the fake LLM servers whose answers the cassettes
# record, and the tooling. A finding is fixed, or carries a
# //detvet:ignore comment that says why it cannot reach an output.
detvet:
	$(GO) run ./cmd/detvet -pkgs=. ./...

# actionlint: the GitHub Actions recipe in docs/ci is a workflow that
# runs as written.
actionlint:
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) docs/ci/github-actions.yml

# race: every in-process test under the race detector, in a random order.
# -short skips the end-to-end tests that build other modules or run the go
# command and built binaries (make test runs them): what they exercise
# runs in other processes, not in this one's goroutines.
race:
	$(GO) test -race -short -shuffle=on ./...

test:
	$(GO) test ./...

# The gate; go test hides a passing package's output, so the one-screen
# summary is written to a file and printed after.
gate:
	@sum=$$(mktemp); $(GO) test ./properties/... -count=1 -args -gate.summary=$$sum; rc=$$?; cat $$sum; rm -f $$sum; exit $$rc

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# fuzz: every Fuzz target in the module, FUZZTIME each (go test fuzzes one
# target per run). Targets are found with go test -list in the packages
# whose tests declare one, so new ones are picked up. A failing input is
# written to the package's testdata/fuzz; commit it as a regression seed
# once fixed. Minimising an input (a new one or a failing one) is bounded by
# FUZZMINIMIZETIME, so that one slow minimisation cannot use up FUZZTIME.
# Go 1.26's fuzz coordinator (internal/fuzz) can report "context deadline
# exceeded" when -fuzztime ends while a worker is mid-input: a target that
# fails so, writing no failing input, runs once more; any other failure,
# or that one twice, fails.
fuzz:
	@pkgs=$$(grep -rl --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git '^func Fuzz' . | xargs -n1 dirname | sort -u); \
	list=$$(mktemp); trap 'rm -f "$$list"' EXIT; \
	$(GO) test -list '^Fuzz' $$pkgs >"$$list" || { cat "$$list"; exit 1; }; \
	awk '/^Fuzz/ { n[++c] = $$1; next } /^ok/ { for (i = 1; i <= c; i++) print $$2, n[i] } { c = 0 }' "$$list" | \
	while read -r pkg target; do \
		echo "fuzz: $$pkg $$target for $(FUZZTIME)"; \
		for try in 1 2; do \
			out=$$($(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "$$pkg" 2>&1) && { echo "$$out" | tail -1; break; }; \
			echo "$$out"; \
			if [ $$try = 1 ] && echo "$$out" | grep -q '^    context deadline exceeded$$' && ! echo "$$out" | grep -q 'Failing input written'; then \
				echo "fuzz: $$target: Go's fuzz coordinator stopped on its own deadline and wrote no failing input; running it once more"; \
				continue; \
			fi; \
			echo "fuzz: $$target in $$pkg failed; a failing input, if any, is in the package's testdata/fuzz/$$target; in the module root run it again with: go test -run '^$$target\$$' $$pkg (the inputs), or go test -run '^\$$' -fuzz '^$$target\$$' -fuzztime $(FUZZTIME) $$pkg (fuzzing)"; \
			exit 1; \
		done; \
	done
