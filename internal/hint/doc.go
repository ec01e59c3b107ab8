// Package hint writes the commands that codegenie's failure messages tell
// people to run, so that each one runs where the reader is: in the module
// whose test failed, which is usually not this repository.
//
// Tool names one of codegenie's own commands (cmd/replay, cmd/ledger, ...)
// in a form the go command resolves from the caller's module: the module's
// own package path inside this repository or where go.mod replaces the
// module, the path at the required version otherwise. GoTest names the go
// test invocation that reruns one test of the current package.
//
// It reads the binary's build information and the working directory; it
// is for messages, not for anything that reaches a digest.
package hint
