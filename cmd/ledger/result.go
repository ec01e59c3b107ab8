package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// gateResult is what replay reads of a gate result file (the harness's
// -gate.results format, "codegenie-gate-result/1"); other members are
// ignored.
type gateResult struct {
	Format       string            `json:"format"`
	Scenario     string            `json:"scenario"`
	Test         string            `json:"test"`
	Verdict      string            `json:"verdict"`
	Runs         int               `json:"runs"`
	Key          string            `json:"key"`
	Pin          map[string]string `json:"pin"`
	OutputDigest string            `json:"output_digest"`
	ChainDigest  string            `json:"chain_digest"`
	Evidence     string            `json:"evidence"`
	Classes      []struct {
		Size         int    `json:"size"`
		OutputDigest string `json:"output_digest"`
		ChainDigest  string `json:"chain_digest"`
		ErrorKind    string `json:"error_kind"`
	} `json:"classes"`
}

const (
	resultFormat  = "codegenie-gate-result/1"
	maxResultFile = 64 << 20
)

// readResults reads the *.json result files in dir, in name order, each
// bounded in size.
func readResults(dir string) ([]gateResult, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the gate wrote no result file (does the test call harness.Check?)")
	}
	slices.Sort(files)
	var out []gateResult
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
		f.Close()
		if err != nil {
			return nil, err
		}
		var r gateResult
		if len(b) > maxResultFile {
			return nil, fmt.Errorf("result file %s is over %d bytes", p, maxResultFile)
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Format != resultFormat {
			return nil, fmt.Errorf("result file %s is not a %s file (err %v, format %q)", p, resultFormat, err, r.Format)
		}
		out = append(out, r)
	}
	return out, nil
}
