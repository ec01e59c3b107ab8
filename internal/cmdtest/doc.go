// Package cmdtest tests the module's commands (cmd/...) the way a user
// runs them: each is built once into a temporary directory and run as a
// separate process. Its tests hold the script tests of every command
// (testdata/script/*.txtar, run with go-internal's testscript) and the
// check that every command prints the same bytes for the same inputs in
// every process.
//
// Outside its tests it holds one helper other packages' tests share:
// [Deps] and [RequireNoDeps], which check what a package links.
package cmdtest
