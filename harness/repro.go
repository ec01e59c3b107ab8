package harness

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/shell"
)

// ReproCommand returns the go test command that reruns exactly the test t
// (anchored -run pattern, -count=1, -artifacts to keep the evidence), from
// the root of the module the test belongs to: it runs in the user's
// module, wherever that is. It is the default Config.ReproCommand in
// Check.
func ReproCommand(t testing.TB) string {
	_, bench := t.(*testing.B)
	return hint.GoTest(t.Name(), bench, "-artifacts")
}

// runPattern is the -test.run pattern that selects exactly the test
// named name (t.Name(), subtests included).
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// moduleRoot returns the directory of the go.mod at or above dir.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no go.mod above " + dir)
		}
		d = up
	}
}

// packageOf returns the working directory and the import path of the
// package there (the module path from go.mod joined with the directory
// below the module root), or the directory again outside a module.
func packageOf() (dir, importPath string) {
	dir, err := os.Getwd()
	if err != nil {
		return "", ""
	}
	root, err := moduleRoot(dir)
	if err != nil {
		return dir, dir
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	mod := modfile.ModulePath(data)
	if err != nil || mod == "" {
		return dir, dir
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return dir, mod
	}
	return dir, mod + "/" + filepath.ToSlash(rel)
}

// reRecordCommand is what a Broken verdict caused by a cassette miss
// suggests: the test's own go test line with the cassettes' record switch
// selecting the cassettes the runs opened (or the configured reproduce
// command with it, outside a test).
func reRecordCommand(rep *Report, paths []string) string {
	bases := make([]string, 0, len(paths))
	for _, p := range paths {
		bases = append(bases, regexp.QuoteMeta(filepath.Base(p)))
	}
	slices.Sort(bases)
	bases = slices.Compact(bases)
	sel := "-" + cassettes.RecordFlag + "=(" + strings.Join(bases, "|") + ")$"
	if len(bases) == 1 {
		sel = "-" + cassettes.RecordFlag + "=" + bases[0] + "$"
	}
	switch {
	case rep.Test != "":
		return hint.GoTest(rep.Test, false, sel)
	case rep.ReproCommand != "":
		return rep.ReproCommand + " " + shell.Quote(sel)
	}
	return "go test -run '<the test that runs this gate>' " + shell.Quote(sel) + " in that test's package"
}
