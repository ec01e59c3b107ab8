package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// defaultReproCommand returns the go test command that reruns exactly the test t
// (its package, an anchored -run pattern, -count=1), from the root of the module the test belongs to: it
// runs in the user's module, wherever that is. It is the default
// Config.ReproCommand in Check.
func defaultReproCommand(t testing.TB) string {
	return reproCommand(t).String()
}

func reproCommand(t testing.TB) gate.Command {
	_, bench := t.(*testing.B)
	return gate.Command(hint.GoTestCommand(hint.PurposeReproduce, t.Name(), bench))
}

// packageOf returns the working directory and the import path of the
// package there (the module path from go.mod joined with the directory
// below the module root), or the directory again outside a module.
func packageOf() (dir, importPath string) {
	//detvet:ignore the reproduce command names the package in the working directory
	dir, err := os.Getwd()
	if err != nil {
		return "", ""
	}
	root, err := hint.RootOf(dir)
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

// reRecordCommand is what a Broken verdict caused by the cassettes
// suggests: the caller's Config.Cassette.Hint, else the test's own go
// test line with the cassettes' record switch selecting the cassettes the
// runs opened, else the configured reproduce command with it; false
// outside a test without either.
func reRecordCommand(rc *resolved, rep *Report, paths []string) (gate.Command, bool) {
	if rc.Cassette.Hint != "" {
		return command(hint.PurposeReRecord, rc.Cassette.Hint), true
	}
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
		return gate.Command(hint.GoTestCommand(hint.PurposeReRecord, rep.Test, false, sel)), true
	case rc.repro != nil:
		c := *rc.repro
		c.Purpose = hint.PurposeReRecord
		if len(c.Argv) == 3 && c.Argv[0] == "sh" && c.Argv[1] == "-c" {
			c.Argv = []string{"sh", "-c", c.Argv[2] + " " + hint.Quote(sel)}
		} else {
			c.Argv = append(slices.Clip(c.Argv), sel)
		}
		return c, true
	}
	return gate.Command{}, false
}
