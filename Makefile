# codegenie — see README.md. Every target needs nothing but Go.
GO ?= go
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
DETVET_PKGS := ./events/... ./rag/... ./prompt/... ./llm/... ./fallback/...

.PHONY: check test gate bench fmt vet staticcheck tidy-check race detvet

check: fmt vet staticcheck tidy-check detvet race

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

tidy-check:
	@cp go.mod /tmp/codegenie-go.mod.bak; cp go.sum /tmp/codegenie-go.sum.bak
	$(GO) mod tidy
	@if ! cmp -s go.mod /tmp/codegenie-go.mod.bak || ! cmp -s go.sum /tmp/codegenie-go.sum.bak; then \
		echo "go mod tidy changed go.mod/go.sum; run 'go mod tidy' and commit"; \
		cp /tmp/codegenie-go.mod.bak go.mod; cp /tmp/codegenie-go.sum.bak go.sum; exit 1; fi

# detvet: the static determinism analyzer over the pipeline packages.
detvet:
	$(GO) run ./cmd/detvet $(DETVET_PKGS)

race:
	$(GO) test -race -shuffle=on ./...

test:
	$(GO) test ./...

# The gate; go test hides a passing package's output, so the one-screen
# summary is written to a file and printed after.
gate:
	@sum=$$(mktemp); $(GO) test ./properties/... -count=1 -args -gate.summary=$$sum; rc=$$?; cat $$sum; rm -f $$sum; exit $$rc

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
