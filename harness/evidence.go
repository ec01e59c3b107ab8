package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/safename"
	"github.com/codegenie/codegenie/replay"
)

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
	dir := filepath.Join(base, safename.Of(scenario))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: evidence directory: %w", err)
	}
	return filepath.Abs(dir)
}

// writeEvidence writes the evidence of a failed gate: a replay bundle of
// the first run of each kept class, the report as JSON and as text. It
// records the files in rep.Evidence, or why they could not be written in
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
	var bundles []string
	for i, c := range g.result() {
		if c.first == nil {
			continue
		}
		p, err := writeBundle(dir, rep.Scenario, c.first)
		if err != nil {
			return err
		}
		rep.Evidence = append(rep.Evidence, Evidence{What: "bundle", Path: p,
			Note: fmt.Sprintf("class %d, run %d; replay bundle", i+1, c.first.iter)})
		bundles = append(bundles, p)
	}
	if d := rep.Divergence; d != nil && len(bundles) >= 2 {
		d.CompareCommand = hint.Tool("replay", "diff", bundles[0], bundles[1])
	}
	jsPath := filepath.Join(dir, "report.json")
	txtPath := filepath.Join(dir, "report.txt")
	rep.Evidence = append(rep.Evidence,
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

// writeBundle writes one run as a single-file replay bundle in dir and
// returns its path.
func writeBundle(dir, scenario string, o *outcome) (string, error) {
	id := fmt.Sprintf("run-%03d", o.iter)
	p := filepath.Join(dir, safename.Of(scenario)+"-"+id+"-"+events.ChainDigest(o.tape).String()[:12]+replay.FileExt)
	b := &replay.Bundle{
		Metadata: replay.Metadata{Scenario: scenario, ToolVersion: "codegenie/harness"},
		Runs:     []replay.Run{{ID: id, Pin: o.pin, Output: o.output, Events: o.tape, Error: o.errText}},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: write replay bundle of run %d: %w", o.iter, err)
	}
	// The name is the run's: a bundle already there is an earlier write
	// of the same run.
	if err := (replay.WriteOptions{Force: true}).WriteFile(context.Background(), p, b); err != nil {
		return "", fmt.Errorf("harness: write replay bundle of run %d: %w", o.iter, err)
	}
	return filepath.Abs(p)
}
