package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/gateflags"
	"github.com/codegenie/codegenie/internal/hint"
)

// resultFormat is the format name of a result file.
const resultFormat = "codegenie-gate-result/3"

// Result is one gate's outcome as its result file holds it (see the
// package documentation): what a merge of shards, a ledger and a re-run
// need, and the first screen of a failing report, without the stacks and
// excerpts of the full report. Paths in a result file are relative to
// the folder that holds it whenever they are inside it, so a folder
// copied elsewhere (a CI artifact) keeps working.
type Result struct {
	// Format is the result file's format, "codegenie-gate-result/3";
	// Save sets it and ReadResults refuses any other.
	Format string `json:"format"`
	Outcome
	// Shard is the shard of the CI run that wrote the result ("i/n", ""
	// unsharded).
	Shard string `json:"shard,omitempty"`
	// InProgress and CrashOutput are set in a result of verdict Crashed,
	// which a gate writes when it starts and replaces with its result when
	// it ends: the run in progress, and the file the process's fatal error
	// report goes to (runtime/debug.SetCrashOutput), beside the result.
	InProgress  string `json:"in_progress,omitempty"`
	CrashOutput string `json:"crash_output,omitempty"`
	// Wall is the wall time of the gate's runs.
	Wall time.Duration `json:"wall_ns"`
	// Folder is the folder ReadResults read the result from, which its
	// relative paths are relative to ("" for a result not read from a
	// folder). It is not part of the result file.
	Folder string `json:"-"`
}

// OK reports whether the result passed (a skipped scenario passes): see
// Err.
func (r Result) OK() bool { return r.Err() == nil }

// Err says why the result is not a pass, naming the scenario and the
// field, or returns nil. A result passes only when its verdict is Pass,
// it carries no failure, it made at least one run and at least its floor
// (a floor of at least 1), and its one class holds every run and no
// error. The verdict decides, never the failure text alone: a result of
// another verdict, or of a verdict this package does not know, fails.
// A skipped result passes: it only says the scenario exists.
func (r Result) Err() error {
	if r.Verdict == Skipped {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("scenario %s: not a pass: %s", quoteName(r.Scenario), fmt.Sprintf(format, args...))
	}
	switch {
	case r.Verdict == Crashed:
		return bad("verdict is %s: the test process died during %s", Crashed, printable(r.InProgress))
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
	case r.Classes[0].Runs != r.Runs:
		return bad("classes[0].runs is %d, want runs (%d)", r.Classes[0].Runs, r.Runs)
	case r.Classes[0].ErrorKind != "":
		return bad("classes[0].error is %s, want none", quoteName(r.Classes[0].ErrorKind))
	}
	return nil
}

// Validate checks what a result file must hold whatever its verdict: a
// scenario (valid UTF-8 without NUL, which every ledger store keeps as it
// is) and a verdict, a valid shard, a crash output file beside the
// result, and what Outcome.Validate checks. The error names the scenario
// and the field.
func (r Result) Validate() error {
	if r.Scenario == "" || r.Verdict == "" {
		return errors.New("no scenario or verdict")
	}
	if !utf8.ValidString(r.Scenario) || strings.ContainsRune(r.Scenario, 0) {
		return fmt.Errorf("scenario %s is not valid UTF-8 without NUL", quoteName(r.Scenario))
	}
	if _, err := gateflags.ParseShard(r.Shard); err != nil {
		return fmt.Errorf("scenario %s: shard is %s, want i/n with 0 <= i < n", quoteName(r.Scenario), quoteName(r.Shard))
	}
	if r.CrashOutput != "" && (!filepath.IsLocal(r.CrashOutput) || filepath.Base(r.CrashOutput) != r.CrashOutput || strings.Contains(r.CrashOutput, "/")) {
		return fmt.Errorf("scenario %s: crash_output is %s, want a file name in the results folder", quoteName(r.Scenario), quoteName(r.CrashOutput))
	}
	if err := r.Outcome.Validate(); err != nil {
		return fmt.Errorf("scenario %s: %w", quoteName(r.Scenario), err)
	}
	return nil
}

// Resolved returns r's outcome with its paths as seen from where the
// reader is: the evidence, and the bundle the compare command names,
// joined to Folder when relative. It is what a ledger records of a result
// read from a folder.
func (r Result) Resolved() Outcome {
	return r.movedEvidence(r.inFolder(r.Evidence))
}

// movedEvidence returns r's outcome with its evidence named ev, in the
// compare command too.
func (r Result) movedEvidence(ev string) Outcome {
	o := r.Outcome
	o.Commands = slices.Clone(o.Commands)
	for i, c := range o.Commands {
		if c.Purpose == hint.PurposeCompare && o.Evidence != "" {
			c.Argv = replaced(c.Argv, o.Evidence, ev)
			o.Commands[i] = c
		}
	}
	o.Evidence = ev
	return o
}

// replaced returns a copy of argv with each word old replaced by new.
func replaced(argv []string, old, new string) []string {
	argv = slices.Clone(argv)
	for i, a := range argv {
		if a == old {
			argv[i] = new
		}
	}
	return argv
}

// identity is the blake3 of the result's canonical JSON without its wall
// time: equal results (the same file read twice, or a retried shard that
// only took longer) have equal identities.
func (r Result) identity() events.Digest {
	r.Wall = 0
	b, err := events.Canonical(r)
	if err != nil {
		panic("gate: result encoding: " + err.Error())
	}
	return events.Sum(b)
}

// Path returns the path of r's file in the results folder dir: the
// scenario as a path element and a digest of import path, test and
// scenario, so two gates never share a file.
func (r Result) Path(dir string) string {
	id := events.Sum([]byte(r.ImportPath + "\x00" + r.Test + "\x00" + r.Scenario)).String()[:16]
	return filepath.Join(dir, hint.SafeName(r.Scenario)+"-"+id+".json")
}

// Save writes r into dir (created if needed) as its result file
// (Encode), atomically, and returns its path (Path).
func (r Result) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("gate: results directory: %w", err)
	}
	js, err := r.Encode(dir)
	if err != nil {
		return "", err
	}
	p := r.Path(dir)
	if err := atomicfile.WriteFile(p, js, 0o644); err != nil {
		return "", fmt.Errorf("gate: %w", err)
	}
	return p, nil
}

// Encode returns r as its result file in the folder dir holds it: of
// this package's format (whatever r.Format says); the explanation cut to
// 40 lines of at most 200 bytes and each class's message to its first
// line (report.txt has the rest); the evidence r names (relative to
// r.Folder when relative), and the compare command's bundle, relative to
// dir with slashes when inside it, else absolute; the crash output file
// only when it is in dir itself (a merge's -out folder holds none).
func (r Result) Encode(dir string) ([]byte, error) {
	r.Format = resultFormat
	r.Explanation = clipLines(r.Explanation, maxExplanationLines, "report.txt beside the evidence bundle has the full report")
	r.Classes = slices.Clone(r.Classes)
	for i, c := range r.Classes {
		c.Message = clipLines(firstLine(c.Message), 1, "")
		r.Classes[i] = c
	}
	r.Outcome = r.movedEvidence(placePath(r.Evidence, r.Folder, dir))
	// A crash output file is read by whoever reads the result: it is
	// named only beside the result.
	if r.CrashOutput = placePath(r.CrashOutput, r.Folder, dir); filepath.Base(r.CrashOutput) != r.CrashOutput || strings.Contains(r.CrashOutput, "/") {
		r.CrashOutput = ""
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("gate: encode result: %w", err)
	}
	return append(js, '\n'), nil
}

// placePath returns p (relative to from when it is relative) relative to
// dir, with slashes, when it is inside dir, else absolute; "" stays "".
func placePath(p, from, dir string) string {
	if p == "" {
		return ""
	}
	abs := filepath.FromSlash(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(from, abs)
	}
	abs, err := filepath.Abs(abs)
	if err != nil {
		return p
	}
	if d, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(d, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// inFolder returns p, a path a result read from its Folder names, as a
// path from where the reader is: relative paths are joined to Folder.
func (r Result) inFolder(p string) string {
	if p == "" || filepath.IsAbs(filepath.FromSlash(p)) {
		return p
	}
	return filepath.Join(r.Folder, filepath.FromSlash(p))
}
