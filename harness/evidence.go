package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/gateflags"
	"github.com/codegenie/codegenie/internal/hint"
)

// testEvidenceDir is where Check keeps the evidence of the test t when
// Config.ArtifactDir is empty: under -gate.evidence (or
// CODEGENIE_GATE_EVIDENCE) if given, else under the evidence folder of
// -gate.results (or CODEGENIE_GATE_RESULTS), so that one folder holds a
// shard's results and their evidence, else t.ArtifactDir() under go test
// -artifacts, else under the user's cache directory (os.UserCacheDir,
// else os.TempDir) in codegenie/evidence; the last element names the
// package and test, with a digest of them and (outside a results folder,
// which is one checkout's) of the module root, so each test of each
// checkout has its own directory. In it each failing
// gate gets a new numbered directory (gate-000001, ...), and only the
// newest keptGates are kept, so the commands an earlier report printed
// still find their evidence after a rerun. It is never in the source
// tree unless asked, and it outlives the test.
func testEvidenceDir(t testing.TB) (string, error) {
	gf, err := gateflags.Get()
	if err != nil {
		return "", err
	}
	if gf.Evidence == "" && gf.Results == "" && artifactsKept() {
		return t.ArtifactDir(), nil
	}
	return claimGateDir(evidenceHome(t, gf))
}

// resultsEvidence is the folder of the results folder that holds the
// evidence by default.
const resultsEvidence = "evidence"

// keptGates is how many failing gates' evidence a test keeps.
const keptGates = 8

// claimGateDir creates the next numbered gate directory in home and
// removes the gate directories older than the keptGates newest.
func claimGateDir(home string) (string, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", fmt.Errorf("harness: evidence directory: %w", err)
	}
	ents, err := os.ReadDir(home)
	if err != nil {
		return "", fmt.Errorf("harness: evidence directory: %w", err)
	}
	var nums []int
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "gate-%06d", &n); err == nil && e.IsDir() && e.Name() == gateName(n) {
			nums = append(nums, n)
		}
	}
	next := 1
	if len(nums) > 0 {
		next = slices.Max(nums) + 1
	}
	for ; ; next++ {
		d := filepath.Join(home, gateName(next))
		err := os.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("harness: evidence directory: %w", err)
		}
		for _, n := range nums {
			if n <= next-keptGates {
				_ = os.RemoveAll(filepath.Join(home, gateName(n)))
			}
		}
		return d, nil
	}
}

func gateName(n int) string { return fmt.Sprintf("gate-%06d", n) }

// evidenceHome is the directory of the test t's gates under the gate
// flags gf.
func evidenceHome(t testing.TB, gf gateflags.Settings) string {
	_, pkg := packageOf()
	key := hint.SafeName(pkg + " " + t.Name() + " @" + roots().seen)
	switch {
	case gf.Evidence != "":
		return filepath.Join(gf.Evidence, key)
	case gf.Results != "":
		// A results folder is one checkout's: its evidence names no
		// path of the machine.
		return filepath.Join(gf.Results, resultsEvidence, hint.SafeName(pkg+" "+t.Name()))
	}
	//detvet:ignore the default home of evidence bundles is the user's cache directory by design
	base, err := os.UserCacheDir()
	if err != nil {
		//detvet:ignore the fallback home of evidence bundles when there is no cache directory
		base = os.TempDir()
	}
	return filepath.Join(base, "codegenie", "evidence", key)
}

// evidenceDir returns (creating it) the directory for scenario's evidence.
func evidenceDir(rc *resolved, e env, scenario string) (string, error) {
	var base string
	switch {
	case rc.ArtifactDir != "":
		base = rc.ArtifactDir
	case e.artifactDir != nil:
		d, err := e.artifactDir()
		if err != nil {
			return "", err
		}
		base = d
	default:
		d, err := os.MkdirTemp("", "codegenie-gate-")
		if err != nil {
			return "", fmt.Errorf("harness: evidence directory: %w", err)
		}
		base = d
	}
	dir := filepath.Join(base, hint.SafeName(scenario))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: evidence directory: %w", err)
	}
	return filepath.Abs(dir)
}

// writeEvidence writes the evidence of a failed gate: a bundle of
// the first run of each kept class, the report as JSON and as text. It
// records the bundle in rep.Evidence and the files in rep.EvidenceFiles,
// or why they could not be written in
// rep.EvidenceError.
func writeEvidence(rc *resolved, e env, rep *Report, g *grouper) {
	dir, err := evidenceDir(rc, e, rep.Scenario)
	if err == nil {
		err = writeEvidenceFiles(dir, rep, g)
	}
	if err != nil {
		rep.EvidenceError = err.Error()
	}
}

func writeEvidenceFiles(dir string, rep *Report, g *grouper) error {
	classes := g.result()
	p, ids, err := writeBundle(dir, rep.Scenario, classes)
	if err != nil {
		return err
	}
	if p != "" {
		var runs []string
		for i, c := range classes {
			if id, ok := ids[c]; ok {
				runs = append(runs, fmt.Sprintf("%s (class %d)", id, i+1))
			}
		}
		rep.Evidence = p
		rep.EvidenceFiles = append(rep.EvidenceFiles, Evidence{What: "bundle", Path: p,
			Note: "runs " + strings.Join(runs, ", ")})
	}
	if d := rep.Divergence; d != nil && len(classes) >= 2 && ids[classes[0]] != "" && ids[classes[1]] != "" {
		rep.addCommand(gate.Command(hint.ToolCommand(hint.PurposeCompare, "bundle", "diff", p, "-runs", ids[classes[0]]+","+ids[classes[1]])))
	}
	jsPath := filepath.Join(dir, "report.json")
	txtPath := filepath.Join(dir, "report.txt")
	rep.EvidenceFiles = append(rep.EvidenceFiles,
		Evidence{What: "report", Path: txtPath, Note: "this report"},
		Evidence{What: "report-json", Path: jsPath, Note: "this report as JSON"})
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("harness: encode report: %w", err)
	}
	if err := atomicfile.WriteFile(jsPath, append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	if err := atomicfile.WriteFile(txtPath, []byte(rep.String()), 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// writeBundle writes one bundle (format of package bundle) in dir
// holding the kept run of each class, largest class first in the report,
// and returns its path and each run's ID; no bundle ("") when no run was
// kept.
func writeBundle(dir, scenario string, classes []*group) (string, map[*group]string, error) {
	ids := map[*group]string{}
	b := &bundle.Bundle{Metadata: bundle.Metadata{Scenario: scenario, ToolVersion: "codegenie/harness"}}
	for _, c := range classes {
		o := c.first
		if o == nil {
			continue
		}
		id := fmt.Sprintf("run-%03d", o.iter)
		ids[c] = id
		b.Runs = append(b.Runs, bundle.Run{ID: id, Pin: o.pin, Output: o.output, Events: o.tape, Error: o.errText})
	}
	if len(b.Runs) == 0 {
		return "", ids, nil
	}
	p := filepath.Join(dir, hint.SafeName(scenario)+bundle.FileExt)
	// The bundle in this directory is an earlier gate's of the same
	// scenario: replace it.
	if err := (bundle.Config{Force: true}).WriteFile(context.Background(), p, b); err != nil {
		return "", ids, fmt.Errorf("harness: write the bundle of %s: %w", scenario, err)
	}
	abs, err := filepath.Abs(p)
	return abs, ids, err
}
