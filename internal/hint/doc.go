// Package hint builds the commands that codegenie's failure messages tell
// people to run, and the names those commands and the files beside them
// carry, so that each command runs where the reader is: in the module
// whose test failed, which is usually not this repository.
//
// Tool names one of codegenie's own commands (cmd/bundle, cmd/ledger, ...)
// in a form the go command resolves from the caller's module: the module's
// own package path inside this repository or where go.mod replaces the
// module, the path at the required version otherwise. GoTest names the go
// test invocation that reruns one test of the current package.
//
// A [Command] prints as one POSIX shell line: [Quote] makes each word one
// shell word and [Join] joins them; [Line] reads such a line back. It is
// not a shell parser and runs nothing.
//
// Names read from files another machine wrote (a ledger entry's package
// and test, a result file's) reach a command only through CheckPackage,
// CheckTestName and CheckPathWord, and GoTestRun builds the go test
// command from them: the package before every flag, the test only as an
// anchored -run pattern (RunPattern, the one quoting of a test name), so
// no such name is ever read as a flag. Names codegenie makes up for the
// files it writes (a scenario's evidence, a result file) come from
// [SafeName], one path element safe on every file system.
//
// Tool, GoTest and the commands built on them read the binary's build
// information and the working directory: they are for messages, not for
// anything that reaches a digest. Quote, Join, the checks and SafeName are
// functions of their arguments alone.
package hint
