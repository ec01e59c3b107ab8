package harness

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// Result returns the report's result: its gate.Outcome, with, for a gate
// that did not pass, the failure, the first screen of Text and the
// commands a result file names (reproduce from the module root, and the
// harness's own compare and re-record: a configured command, from
// Config.ReproCommand or Cassette.Hint, is the report's). Its Evidence
// and the compare command name the bundle by its absolute path; Save
// makes them relative to the folder it writes to.
func (r *Report) Result() gate.Result {
	res := gate.Result{Outcome: r.Outcome, Shard: r.Shard, Wall: r.Wall}
	res.Commands = nil
	err := r.Err()
	if err == nil {
		return res
	}
	res.Failure = err.Error()
	res.Explanation = r.firstScreen()
	if res.Test != "" && res.Package != "" {
		res.Commands = append(res.Commands, gate.Command(hint.GoTestOf(hint.PurposeReproduce, res.Package, res.Test, hint.IsBenchmark(res.Test))))
	}
	for _, c := range r.Commands {
		c.Dir = ""
		if c.Purpose != hint.PurposeReproduce && res.CheckCommand(c) == nil {
			res.Commands = append(res.Commands, c)
		}
	}
	slices.SortStableFunc(res.Commands, func(a, b gate.Command) int { return commandRank(a) - commandRank(b) })
	return res
}

// firstScreen is the first screen of the failing report r: the headline,
// what differs and the cause, as Text writes them (a result file keeps
// its first 40 lines).
func (r *Report) firstScreen() string {
	var sb strings.Builder
	r.writeAnswer(&sb)
	return sb.String()
}

// moduleDir is dir relative to its module root, with slashes ("." for
// the root), as a result file and a ledger entry take a package directory
// (hint.CheckPackage); "" outside a module or where the directory is no
// package path, so that the outcome names no package rather than one a
// re-run would refuse.
func moduleDir(dir string) string {
	root, err := hint.RootOf(dir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return ""
	}
	rel = filepath.ToSlash(rel)
	if hint.CheckPackage(rel) != nil {
		return ""
	}
	return rel
}
