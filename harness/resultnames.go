package harness

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codegenie/codegenie/internal/hint"
)

// checkNames checks the names of a result read from a file, which another
// machine may have written, before anything turns them into arguments or
// paths: the package (hint.CheckPackage: ./DIR or an import path, never a
// flag), the test (hint.CheckTestName: a Go test's name, which the ledger
// reruns as a -run pattern), the evidence path (hint.CheckPathWord) and
// the scenario (valid UTF-8 without NUL, which every ledger store keeps
// as it is). Each is checked when set; the error names the field.
func (r Result) checkNames() error {
	if r.Package != "" {
		if err := hint.CheckPackage(r.Package); err != nil {
			return err
		}
	}
	if r.Test != "" {
		if err := hint.CheckTestName(r.Test); err != nil {
			return err
		}
	}
	if r.Evidence != "" {
		if err := hint.CheckPathWord(r.Evidence); err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
	}
	if !utf8.ValidString(r.Scenario) || strings.ContainsRune(r.Scenario, 0) {
		return fmt.Errorf("scenario %s is not valid UTF-8 without NUL", quoteName(r.Scenario))
	}
	return nil
}
