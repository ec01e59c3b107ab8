// Command detvet runs the detvet analyzer (package
// github.com/codegenie/codegenie/detvet), which reports sources of
// nondeterminism that can reach a pipeline's output.
//
// In a module that requires codegenie, with no arguments it checks every
// package of the module in the current directory (./...):
//
//	go run github.com/codegenie/codegenie/cmd/detvet
//
// It prints the findings, one "file:line:col: message" per line, then how
// many packages it checked. Package patterns are those of go build:
//
//	go run github.com/codegenie/codegenie/cmd/detvet ./pipeline/...
//
// A pattern that matches no package is an error. In codegenie's own module
// only the pipeline packages (detvet.DefaultPackages) are checked unless
// -pkgs says otherwise.
//
// As a vet tool, speaking the go vet protocol (a unit.cfg file per package):
//
//	go build -o /tmp/detvet github.com/codegenie/codegenie/cmd/detvet
//	go vet -vettool=/tmp/detvet ./...
//
// Flags: -pkgs=REGEXP selects the packages to check by import path;
// -tests also checks _test.go files; -json prints the findings as JSON.
//
// Exit status: 0 when nothing is reported, 3 when findings are reported
// (go vet exits 1), 1 when a pattern matches no package or packages fail
// to load or type-check, 2 for usage errors.
package main
