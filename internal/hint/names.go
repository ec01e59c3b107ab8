package hint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/module"
)

// errName is wrapped by every error of the name checks below.
var errName = errors.New("unsafe name")

// CheckTestName reports whether name is a Go test's name as
// testing.T.Name gives it: a test function (Test, Benchmark or Fuzz, then
// the rest of a Go identifier, which does not start with a lower-case
// letter), then any subtest elements, each after a "/", of printable
// characters other than a space (testing writes a space as "_" and
// escapes what does not print). Such a name reaches a command only as a
// -run pattern (RunPattern), never as a word of its own.
func CheckTestName(name string) error {
	fn, subtests, _ := strings.Cut(name, "/")
	if !isTestFunc(fn) {
		return fmt.Errorf("%w: test %s is not a Go test's name (TestName, with /subtest elements)", errName, strconv.Quote(name))
	}
	if !utf8.ValidString(subtests) {
		return fmt.Errorf("%w: test %s is not valid UTF-8", errName, strconv.Quote(name))
	}
	for _, r := range subtests {
		if r == ' ' || !strconv.IsPrint(r) {
			return fmt.Errorf("%w: test %s holds %s, which a Go test's name never does", errName, strconv.Quote(name), strconv.QuoteRune(r))
		}
	}
	return nil
}

// isTestFunc reports whether fn is the name of a Go test, benchmark or
// fuzz target function, as go test finds them.
func isTestFunc(fn string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz"} {
		rest, ok := strings.CutPrefix(fn, prefix)
		if !ok {
			continue
		}
		for i, r := range rest {
			if i == 0 && unicode.IsLower(r) {
				return false
			}
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
				return false
			}
		}
		return utf8.ValidString(rest)
	}
	return false
}

// CheckPackage reports whether pkg names a package as a ledger entry or a
// result file may: "." or "./DIR", a directory below the module root, or
// an import path (module.CheckImportPath), which a directory relative to
// the module root written without "./" also is. None starts with "-",
// holds a ".." element, a pattern ("...") or a character an import path
// may not, so go test never reads it as a flag or as a place outside the
// module.
func CheckPackage(pkg string) error {
	if pkg == "." {
		return nil
	}
	p := strings.TrimPrefix(pkg, "./")
	if err := module.CheckImportPath(p); err != nil {
		return fmt.Errorf("%w: package %s is neither ./DIR below the module root nor an import path: %v", errName, strconv.Quote(pkg), err)
	}
	return nil
}

// PackageArg returns pkg, which CheckPackage accepts, as go test takes it:
// a directory relative to the module root gets "./" (go test would read
// "properties" as a standard-library path); an import path, whose first
// element has a dot, is kept.
func PackageArg(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	if pkg == "." || strings.HasPrefix(pkg, "./") || strings.Contains(first, ".") {
		return pkg
	}
	return "./" + pkg
}

// CheckPathWord reports whether p, a path read from a file another
// machine wrote, may be printed in a command or passed to one as a word:
// valid UTF-8, no control character, not starting with "-".
func CheckPathWord(p string) error {
	switch {
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: path %s is not valid UTF-8", errName, strconv.Quote(p))
	case strings.HasPrefix(p, "-"):
		return fmt.Errorf("%w: path %s starts with \"-\", which a command reads as a flag", errName, strconv.Quote(p))
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: path %s holds a control character", errName, strconv.Quote(p))
	}
	return nil
}

// GoTestRun returns the command that runs the test named test (which
// CheckTestName accepts) of package pkg (which CheckPackage accepts) from
// the module root: go test, the package (PackageArg), an anchored -run
// pattern (RunPattern), -count=1, then flags as given. It refuses a name
// either check refuses, so that nothing read from a file chooses a flag.
func GoTestRun(purpose, pkg, test string, flags ...string) (Command, error) {
	if err := CheckPackage(pkg); err != nil {
		return Command{}, err
	}
	if err := CheckTestName(test); err != nil {
		return Command{}, err
	}
	return Command{Purpose: purpose, Argv: goTestArgv(PackageArg(pkg), "-run", test, flags)}, nil
}

// goTestArgv is go test, the package, the -run (or -bench) pattern that
// selects the test named name, -count=1 and flags. The package comes
// before every flag: go test stops reading packages at the first flag it
// does not know, so a package after -cassettes.record would go to the
// test binary.
func goTestArgv(pkg, kind, name string, flags []string) []string {
	return append([]string{"go", "test", pkg, kind, RunPattern(name), "-count=1"}, flags...)
}
