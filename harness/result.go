package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/safename"
)

// resultFormat is the format name of a result file.
const resultFormat = "codegenie-gate-result/1"

// Result is one Check's verdict as the gate's result file holds it (see
// the package documentation): what a merge of shards, a ledger and a
// re-run need, without the stacks and excerpts of the full Report.
type Result struct {
	// Format is the result file's format, "codegenie-gate-result/1";
	// WriteResult sets it and ReadResults refuses any other.
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	// Test is the test's name (t.Name()); Package its import path and Dir
	// its directory on the machine that ran it; Shard the shard ("i/n",
	// "" unsharded).
	Test    string  `json:"test"`
	Package string  `json:"package"`
	Dir     string  `json:"dir"`
	Shard   string  `json:"shard,omitempty"`
	Verdict Verdict `json:"verdict"`
	Skipped string  `json:"skipped,omitempty"`
	// Failure is Report.Err's message; "" when the gate passed.
	Failure      string            `json:"failure,omitempty"`
	Iterations   int               `json:"iterations"`
	Runs         int               `json:"runs"`
	ProcessRuns  int               `json:"process_runs"`
	Floor        int               `json:"floor"`
	Classes      []Class           `json:"classes,omitempty"`
	Key          string            `json:"key,omitempty"`
	Pin          map[string]string `json:"pin,omitempty"`
	OutputDigest events.Digest     `json:"output_digest"`
	ChainDigest  events.Digest     `json:"chain_digest"`
	Events       int               `json:"events"`
	Causes       *Causes           `json:"causes,omitempty"`
	// Evidence is the main evidence file (the bundle of the kept runs),
	// "" when none was written.
	Evidence        string        `json:"evidence,omitempty"`
	ReproCommand    string        `json:"repro_command,omitempty"`
	ReRecordCommand string        `json:"rerecord_command,omitempty"`
	Wall            time.Duration `json:"wall_ns"`
}

// OK reports whether the result passed (a skipped scenario passes): see
// Err.
func (r Result) OK() bool { return r.Err() == nil }

// Err says why the result is not a pass, naming the scenario and the
// field, or returns nil. A result passes only when its verdict is PASS,
// it carries no failure, it made at least one run and at least its floor
// (a floor of at least 1), and its one class holds every run and no
// error. The verdict decides, never the failure text alone: a result of
// another verdict, or of a verdict this harness does not know, fails.
// A skipped result passes: it only says the scenario exists.
func (r Result) Err() error {
	if r.Verdict == Skipped {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("scenario %s: not a pass: %s", quoteName(r.Scenario), fmt.Sprintf(format, args...))
	}
	switch {
	case r.Verdict != Pass:
		return bad("verdict is %s, want %s", quoteName(string(r.Verdict)), Pass)
	case r.Failure != "":
		return bad("failure is %s", quoteName(firstLine(r.Failure)))
	case r.Runs < 1:
		return bad("runs is %d, want at least 1", r.Runs)
	case r.Floor < 1:
		return bad("floor is %d, want at least 1", r.Floor)
	case r.Runs < r.Floor:
		return bad("runs is %d, below the floor of %d", r.Runs, r.Floor)
	case len(r.Classes) != 1:
		return bad("classes has %d entries, want 1", len(r.Classes))
	case r.Classes[0].Size != r.Runs:
		return bad("classes[0].size is %d, want runs (%d)", r.Classes[0].Size, r.Runs)
	case r.Classes[0].ErrorKind != "":
		return bad("classes[0].error_kind is %s, want none", quoteName(r.Classes[0].ErrorKind))
	}
	return nil
}

// validate checks what a result file must hold whatever its verdict:
// a scenario and a verdict, a valid shard, no negative count.
func (r Result) validate() error {
	if r.Scenario == "" || r.Verdict == "" {
		return errors.New("no scenario or verdict")
	}
	if _, err := parseShard(r.Shard); err != nil {
		return fmt.Errorf("scenario %s: shard is %s, want i/n with 0 <= i < n", quoteName(r.Scenario), quoteName(r.Shard))
	}
	counts := []struct {
		field string
		n     int
	}{{"iterations", r.Iterations}, {"runs", r.Runs}, {"process_runs", r.ProcessRuns}, {"floor", r.Floor}, {"events", r.Events}}
	for i, c := range r.Classes {
		counts = append(counts, struct {
			field string
			n     int
		}{fmt.Sprintf("classes[%d].size", i), c.Size})
	}
	for _, c := range counts {
		if c.n < 0 {
			return fmt.Errorf("scenario %s: %s is %d, want at least 0", quoteName(r.Scenario), c.field, c.n)
		}
	}
	return nil
}

// quoteName returns s as it is when every rune is a printable character
// other than a space or a quote, else quoted with Go's escapes: a name
// read from a file never reaches a terminal as raw control bytes.
func quoteName(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if c == utf8.RuneError || !unicode.IsPrint(c) || unicode.IsSpace(c) || c == '"' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Result returns the report's result.
func (r *Report) Result() Result {
	res := Result{
		Format: resultFormat, Scenario: r.Scenario, Test: r.Test, Package: r.Package, Dir: r.Dir, Shard: r.Shard,
		Verdict: r.Verdict, Skipped: r.Skipped, Iterations: r.Iterations, Runs: r.Runs, ProcessRuns: r.ProcessRuns,
		Floor: r.Floor, Classes: r.Classes, Key: r.Key, Pin: r.Pin, OutputDigest: r.OutputDigest,
		ChainDigest: r.ChainDigest, Events: r.Events, Causes: r.Causes, ReproCommand: r.ReproCommand,
		ReRecordCommand: r.ReRecordCommand, Wall: r.Wall,
	}
	if err := r.Err(); err != nil {
		res.Failure = err.Error()
	}
	for _, e := range r.Evidence {
		if e.What == "bundle" {
			res.Evidence = e.Path
			break
		}
	}
	return res
}

// identity is the blake3 of the result's canonical JSON without its wall
// time: equal results (the same file read twice, or a retried shard that
// only took longer) have equal identities.
func (r Result) identity() events.Digest {
	r.Wall = 0
	b, err := events.Canonical(r)
	if err != nil {
		panic("harness: result encoding: " + err.Error())
	}
	return events.Sum(b)
}

// resultFileName is the file a result is written to in a results
// directory: the scenario as a path element and a digest of package, test
// and scenario, so two Checks never share a file.
func resultFileName(r Result) string {
	id := events.Sum([]byte(r.Package + "\x00" + r.Test + "\x00" + r.Scenario)).String()[:16]
	return safename.Of(r.Scenario) + "-" + id + ".json"
}

// WriteResult writes r into dir (created if needed) as one JSON file of
// this harness's format (it sets r.Format), atomically, and returns its
// path.
func WriteResult(dir string, r Result) (string, error) {
	r.Format = resultFormat
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: results directory: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("harness: encode result: %w", err)
	}
	p := filepath.Join(dir, resultFileName(r))
	if err := atomicfile.WriteFile(p, append(js, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	return p, nil
}

// errBadResult is wrapped by errors about a result file.
var errBadResult = errors.New("bad result file")

// maxResultFile bounds one result file, and maxResultObjects the JSON
// objects in it: decoding turns a 3-byte "{}" into a struct of a hundred
// bytes or more, so the count bounds the memory a file decodes to.
const (
	maxResultFile    = 8 << 20
	maxResultObjects = 1 << 16
)

// readResult reads one result file: a regular file (not a symbolic link,
// a FIFO or a device) of at most 8 MiB and 65,536 JSON objects, holding
// strict JSON of resultFormat with a scenario, a verdict, a valid shard,
// no negative count and names checkNames accepts.
func readResult(path string) (Result, error) {
	var r Result
	// Lstat first: opening a FIFO for reading would block until a writer
	// comes.
	if err := regularFile(path); err != nil {
		return r, err
	}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, err
	}
	if !fi.Mode().IsRegular() {
		return r, fmt.Errorf("%w: %s is not a regular file (%s)", errBadResult, path, fi.Mode().Type())
	}
	if fi.Size() > maxResultFile {
		return r, fmt.Errorf("%w: %s is over %d bytes", errBadResult, path, maxResultFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
	if err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	if len(b) > maxResultFile {
		return r, fmt.Errorf("%w: %s is over %d bytes", errBadResult, path, maxResultFile)
	}
	if n := bytes.Count(b, []byte("{")); n > maxResultObjects {
		return r, fmt.Errorf("%w: %s holds %d JSON objects or more, at most %d", errBadResult, path, n, maxResultObjects)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	if dec.More() {
		return r, fmt.Errorf("%w: %s: data after the JSON value", errBadResult, path)
	}
	if r.Format != resultFormat {
		return r, fmt.Errorf("%w: %s: format %q, want %q (written by another version of the harness? re-run the gate with this one)", errBadResult, path, r.Format, resultFormat)
	}
	if err := r.validate(); err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	if err := r.checkNames(); err != nil {
		return r, fmt.Errorf("%w: %s: %w", errBadResult, path, err)
	}
	return r, nil
}

// regularFile refuses path unless it is a regular file itself.
func regularFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%s); a result file is one", errBadResult, path, fi.Mode().Type())
	}
	return nil
}

// ReadResults reads every *.json result file in dir, in file name order.
// An empty directory is an error: a gate that wrote nothing did not run.
func ReadResults(dir string) ([]Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no result files (*.json) in %s: did the gate run with -gate.results=%s?", errBadResult, dir, dir)
	}
	slices.Sort(files)
	out := make([]Result, 0, len(files))
	for _, f := range files {
		r, err := readResult(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
