// Command detvet runs the detvet analyzer (package
// github.com/codegenie/codegenie/detvet), which reports sources of
// nondeterminism in codegenie's pipeline packages.
//
// Standalone, on package patterns:
//
//	go run ./cmd/detvet ./events/... ./rag/... ./prompt/... ./llm/... ./fallback/...
//
// As a vet tool, speaking the go vet protocol (a unit.cfg file per package):
//
//	go build -o /tmp/detvet ./cmd/detvet
//	go vet -vettool=/tmp/detvet ./...
//
// Flags: -pkgs=REGEXP replaces the default pipeline-package pattern
// (detvet.DefaultPackages); -tests also checks _test.go files; the usual
// analysis driver flags (-json, -c=N, -fix, -test, ...) apply standalone.
//
// Exit status: 0 when nothing is reported, 3 when findings are reported
// standalone (go vet exits 1), 1 when packages fail to load or type-check,
// 2 for usage errors.
//
// The command is a thin main over singlechecker.Main from
// golang.org/x/tools/go/analysis, which implements both the standalone
// driver and the vet protocol; all logic lives in package detvet.
package main
