// Package hint writes the commands that codegenie's failure messages tell
// people to run, so that each one runs where the reader is: in the module
// whose test failed, which is usually not this repository.
//
// Tool names one of codegenie's own commands (cmd/bundle, cmd/ledger, ...)
// in a form the go command resolves from the caller's module: the module's
// own package path inside this repository or where go.mod replaces the
// module, the path at the required version otherwise. GoTest names the go
// test invocation that reruns one test of the current package.
//
// Names read from files another machine wrote (a ledger entry's package
// and test, a result file's) reach a command only through CheckPackage,
// CheckTestName and CheckPathWord, and GoTestRun builds the go test
// command from them: the package before every flag, the test only as an
// anchored -run pattern (RunPattern, the one quoting of a test name), so
// no such name is ever read as a flag.
//
// It reads the binary's build information and the working directory; it
// is for messages, not for anything that reaches a digest.
package hint
