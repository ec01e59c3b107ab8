package gate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/hint"
)

// Validate checks what an outcome from another machine (a result file, a
// ledger entry) must hold before anything turns its names into arguments
// or paths: no negative count; digests of 64 hex digits; a package
// directory relative to the module root and an import path that go test
// takes as a package, never as a flag (".", ./DIR or an import path); a
// Go test's name, which a re-run passes as a -run pattern; an evidence
// path that is no flag and holds no control character; and only the
// commands CheckCommand accepts. The error names the field. (A report's
// outcome also lists the commands it prints with their directories and
// the configured ones, which a result file and a ledger entry do not
// hold.)
func (o Outcome) Validate() error {
	for _, check := range []func() error{o.checkCounts, o.checkDigests, o.checkNames} {
		if err := check(); err != nil {
			return err
		}
	}
	for i, c := range o.Commands {
		if err := o.CheckCommand(c); err != nil {
			return fmt.Errorf("commands[%d] (%s) %w", i, quoteName(c.Purpose), err)
		}
	}
	return nil
}

// field is a member of an outcome by its JSON name, and its value.
type field[T any] struct {
	name  string
	value T
}

// checkCounts refuses a negative count.
func (o Outcome) checkCounts() error {
	counts := []field[int]{{"iterations", o.Iterations}, {"runs", o.Runs}, {"process_runs", o.ProcessRuns}, {"floor", o.Floor}, {"events", o.Events}}
	for i, c := range o.Classes {
		for _, f := range []field[int]{{"runs", c.Runs}, {"first_run", c.FirstRun}, {"in_process", c.InProcess}, {"events", c.Events}} {
			counts = append(counts, field[int]{fmt.Sprintf("classes[%d].%s", i, f.name), f.value})
		}
	}
	for _, c := range counts {
		if c.value < 0 {
			return fmt.Errorf("%s is %d, want at least 0", c.name, c.value)
		}
	}
	return nil
}

// checkDigests refuses a digest that is not 64 hex digits.
func (o Outcome) checkDigests() error {
	digests := []field[string]{{"output_digest", o.OutputDigest}, {"chain_digest", o.ChainDigest}}
	for i, c := range o.Classes {
		digests = append(digests, field[string]{fmt.Sprintf("classes[%d].output_digest", i), c.OutputDigest},
			field[string]{fmt.Sprintf("classes[%d].chain_digest", i), c.ChainDigest})
	}
	for _, d := range digests {
		if d.value != "" && !isHexDigest(d.value) {
			return fmt.Errorf("%s is %s, want 64 hex digits", d.name, quoteName(d.value))
		}
	}
	return nil
}

// checkNames refuses a package, import path, test or evidence path that
// a command would not take as such (hint.CheckPackage,
// hint.CheckTestName, hint.CheckPathWord).
func (o Outcome) checkNames() error {
	if o.Package != "" {
		if err := hint.CheckPackage(o.Package); err != nil {
			return err
		}
		if o.Package != "." && !filepath.IsLocal(filepath.FromSlash(o.Package)) {
			return fmt.Errorf("package is %s, want a directory relative to the module root", quoteName(o.Package))
		}
	}
	if o.ImportPath != "" {
		if err := hint.CheckPackage(o.ImportPath); err != nil {
			return fmt.Errorf("import_path: %w", err)
		}
	}
	if o.Test != "" {
		if err := hint.CheckTestName(o.Test); err != nil {
			return err
		}
	}
	if o.Evidence != "" {
		if err := hint.CheckPathWord(o.Evidence); err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
	}
	return nil
}

// CheckCommand returns an error unless c is one of the commands a gate
// writes into a result file for o, with no directory: compare, bundle
// diff on o's evidence bundle; reproduce, go test of o's package
// directory and test; re-record, that with the cassettes' record flag.
// An outcome from another machine names nothing else for people to run.
func (o Outcome) CheckCommand(c Command) error {
	if c.Dir != "" {
		return errors.New("names a directory; a result's commands run from the module root or the results folder")
	}
	a := c.Argv
	switch c.Purpose {
	case hint.PurposeCompare:
		if len(a) == 7 && a[0] == "go" && a[1] == "run" && bundleTool.MatchString(a[2]) && a[3] == "diff" &&
			o.Evidence != "" && a[4] == o.Evidence && a[5] == "-runs" && runPair.MatchString(a[6]) {
			return nil
		}
		return errors.New("is not bundle diff on the result's evidence bundle")
	case hint.PurposeReproduce, hint.PurposeReRecord:
		if o.Test == "" || o.Package == "" {
			return errors.New("is given for a result that names no test and package directory")
		}
		want := hint.GoTestOf(c.Purpose, o.Package, o.Test, hint.IsBenchmark(o.Test)).Argv
		n := len(want)
		if c.Purpose == hint.PurposeReRecord {
			n++
		}
		if len(a) == n && slices.Equal(a[:len(want)], want) &&
			(c.Purpose == hint.PurposeReproduce || strings.HasPrefix(a[n-1], "-"+recordFlag+"=")) {
			return nil
		}
		return fmt.Errorf("is not go test of the result's package directory and test")
	}
	return errors.New("is of no purpose the harness writes")
}

// isHexDigest reports whether s is a digest in hex: 64 hex digits.
func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// recordFlag is cassettes.RecordFlag (a test holds them equal): gate
// does not link the cassettes.
const recordFlag = "cassettes.record"

var (
	// bundleTool is cmd/bundle as hint.Tool names it.
	bundleTool = regexp.MustCompile(`^` + regexp.QuoteMeta(hint.Module+"/cmd/bundle") + `(@[A-Za-z0-9._+-]+)?$`)
	// runPair is two run IDs of a bundle the harness writes.
	runPair = regexp.MustCompile(`^run-[0-9]+,run-[0-9]+$`)
)
