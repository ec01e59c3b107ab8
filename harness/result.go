package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/safename"
)

// resultFormat is the format name of a result file.
const resultFormat = "codegenie-gate-result/2"

// Result is one Check's verdict as the gate's result file holds it (see
// the package documentation): what a merge of shards, a ledger and a
// rerun need, and the first screen of a failing report, without the
// stacks and excerpts of the full Report. Paths in a result file are
// relative to the folder that holds it whenever they are inside it, so a
// folder copied elsewhere (a CI artifact) keeps working.
type Result struct {
	// Format is the result file's format, "codegenie-gate-result/2";
	// WriteResult sets it and ReadResults refuses any other.
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	// Test is the test's name (t.Name()); Package its import path and Dir
	// its directory relative to the module root, with slashes ("." for the
	// root); Shard the shard ("i/n", "" unsharded).
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
	// Explanation is the first screen of the report of a gate that did
	// not pass, as Report.Text renders it: the headline, what differs
	// and the cause (at most 40 lines); "" when the gate passed.
	Explanation string `json:"explanation,omitempty"`
	// Evidence is the main evidence file (the bundle of the kept runs),
	// "" when none was written; report.txt and report.json are beside it.
	Evidence string `json:"evidence,omitempty"`
	// Commands are the commands a merge prints for a gate that did not
	// pass, as data (Dir is empty): compare (bundle diff on Evidence, run
	// from the folder Evidence is relative to), reproduce and re-record
	// (go test of Dir and Test, run from the module root).
	Commands []Command `json:"commands,omitempty"`
	// InProgress and CrashOutput are set in a result of verdict CRASHED,
	// which a gate writes when it starts and replaces with its result when
	// it ends: the run in progress, and the file the process's fatal error
	// report goes to (runtime/debug.SetCrashOutput). Such a result left
	// behind means the test process died during the gate.
	InProgress  string        `json:"in_progress,omitempty"`
	CrashOutput string        `json:"crash_output,omitempty"`
	Wall        time.Duration `json:"wall_ns"`
	// Folder is the folder ReadResults read the result from, which its
	// relative paths are relative to ("" for a result not read from a
	// folder). It is not part of the result file.
	Folder string `json:"-"`
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
	case r.Verdict == crashed:
		return bad("verdict is %s: the test process died during %s", crashed, printable(r.InProgress))
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
	if r.Dir != "" && r.Dir != "." && !filepath.IsLocal(filepath.FromSlash(r.Dir)) {
		return fmt.Errorf("scenario %s: dir is %s, want a directory relative to the module root", quoteName(r.Scenario), quoteName(r.Dir))
	}
	if r.CrashOutput != "" && (!filepath.IsLocal(r.CrashOutput) || filepath.Base(r.CrashOutput) != r.CrashOutput || strings.Contains(r.CrashOutput, "/")) {
		return fmt.Errorf("scenario %s: crash_output is %s, want a file name in the results folder", quoteName(r.Scenario), quoteName(r.CrashOutput))
	}
	for i, c := range r.Commands {
		if err := r.checkCommand(c); err != nil {
			return fmt.Errorf("scenario %s: commands[%d] (%s) %w", quoteName(r.Scenario), i, quoteName(c.Purpose), err)
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

// Result returns the report's result. Its Evidence and the compare
// command name the bundle by its absolute path; WriteResult makes them
// relative to the folder it writes to.
func (r *Report) Result() Result {
	res := Result{
		Format: resultFormat, Scenario: r.Scenario, Test: r.Test, Package: r.Package, Shard: r.Shard,
		Verdict: r.Verdict, Skipped: r.Skipped, Iterations: r.Iterations, Runs: r.Runs, ProcessRuns: r.ProcessRuns,
		Floor: r.Floor, Classes: r.Classes, Key: r.Key, Pin: r.Pin, OutputDigest: r.OutputDigest,
		ChainDigest: r.ChainDigest, Events: r.Events, Causes: r.Causes, Wall: r.Wall,
	}
	if r.Dir != "" {
		res.Dir = moduleDir(r.Dir)
	}
	for _, e := range r.Evidence {
		if e.What == "bundle" {
			res.Evidence = e.Path
			break
		}
	}
	err := r.Err()
	if err == nil {
		return res
	}
	res.Failure = err.Error()
	res.Explanation = r.firstScreen()
	if res.Test != "" && res.Dir != "" {
		res.Commands = append(res.Commands, Command(hint.GoTestOf(purposeReproduce, res.Dir, res.Test, isBenchmark(res.Test))))
	}
	for _, c := range r.Commands {
		c.Dir = ""
		// A configured command (Config.ReproCommand, Cassette.Hint) is
		// the report's; a result carries only the harness's own.
		if c.Purpose != purposeReproduce && res.checkCommand(c) == nil {
			res.Commands = append(res.Commands, c)
		}
	}
	slices.SortStableFunc(res.Commands, func(a, b Command) int { return commandRank(a) - commandRank(b) })
	return res
}

// isBenchmark reports whether the test named name (testing.TB.Name())
// is a benchmark: go test runs a function as one by its name.
func isBenchmark(name string) bool { return strings.HasPrefix(name, "Benchmark") }

// maxExplanationLines bounds Result.Explanation.
const maxExplanationLines = 40

// firstScreen is the first screen of the failing report r: the headline,
// what differs and the cause, as Text writes them, at most
// maxExplanationLines lines (of at most 200 bytes each).
func (r *Report) firstScreen() string {
	var sb strings.Builder
	r.writeAnswer(&sb)
	return clipLines(sb.String(), maxExplanationLines, "report.txt beside the evidence bundle has the full report")
}

// clipLines returns s without its trailing newlines, cut to at most max
// lines of at most 200 bytes each (a cut line ends in "..."), and when it
// cut lines, a last line that says how many and where more is.
func clipLines(s string, max int, more string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	const width = 200
	for i, l := range lines {
		if len(l) > width {
			cut := width
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			lines[i] = l[:cut] + "..."
		}
	}
	if len(lines) > max {
		n := len(lines) - max
		lines = append(lines[:max], fmt.Sprintf("... %d more lines: %s", n, more))
	}
	return strings.Join(lines, "\n")
}

// checkCommand returns an error unless c is one of the commands the
// harness writes into a result of r: compare, bundle diff on r's
// evidence bundle; reproduce, go test of r's package directory and test;
// re-record, that with the cassettes' record flag. A result file from
// another machine names nothing else for people to run.
func (r Result) checkCommand(c Command) error {
	if c.Dir != "" {
		return errors.New("names a directory; a result's commands run from the module root or the results folder")
	}
	a := c.Argv
	switch c.Purpose {
	case purposeCompare:
		if len(a) == 7 && a[0] == "go" && a[1] == "run" && bundleTool.MatchString(a[2]) && a[3] == "diff" &&
			r.Evidence != "" && a[4] == r.Evidence && a[5] == "-runs" && runPair.MatchString(a[6]) {
			return nil
		}
		return errors.New("is not bundle diff on the result's evidence bundle")
	case purposeReproduce, purposeReRecord:
		if r.Test == "" || r.Dir == "" {
			return errors.New("is given for a result that names no test and package directory")
		}
		want := hint.GoTestOf(c.Purpose, r.Dir, r.Test, isBenchmark(r.Test)).Argv
		n := len(want)
		if c.Purpose == purposeReRecord {
			n++
		}
		if len(a) == n && slices.Equal(a[:len(want)], want) &&
			(c.Purpose == purposeReproduce || strings.HasPrefix(a[n-1], "-"+cassettes.RecordFlag+"=")) {
			return nil
		}
		return fmt.Errorf("is not go test of the result's package directory and test")
	}
	return errors.New("is of no purpose the harness writes")
}

var (
	// bundleTool is cmd/bundle as hint.Tool names it.
	bundleTool = regexp.MustCompile(`^` + regexp.QuoteMeta(hint.Module+"/cmd/bundle") + `(@[A-Za-z0-9._+-]+)?$`)
	// runPair is two run IDs of a bundle the harness writes (runID).
	runPair = regexp.MustCompile(`^run-[0-9]+,run-[0-9]+$`)
)

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
// path. The evidence r names (relative to r.Folder when relative) is
// written relative to dir, with slashes, when it is inside dir, and
// absolute otherwise; the crash output file only when it is in dir
// itself (a merge's -out folder holds none).
func WriteResult(dir string, r Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: results directory: %w", err)
	}
	js, err := r.encodeFor(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, resultFileName(r))
	if err := atomicfile.WriteFile(p, js, 0o644); err != nil {
		return "", fmt.Errorf("harness: %w", err)
	}
	return p, nil
}

// encodeFor returns r as the result file in dir holds it.
func (r Result) encodeFor(dir string) ([]byte, error) {
	r.Format = resultFormat
	ev := placePath(r.Evidence, r.Folder, dir)
	r.Commands = slices.Clone(r.Commands)
	for i, c := range r.Commands {
		if c.Purpose == purposeCompare && r.Evidence != "" {
			c.Argv = slices.Clone(c.Argv)
			for j, a := range c.Argv {
				if a == r.Evidence {
					c.Argv[j] = ev
				}
			}
			r.Commands[i] = c
		}
	}
	r.Evidence = ev
	// A crash output file is read by whoever reads the result: it is
	// named only beside the result.
	if r.CrashOutput = placePath(r.CrashOutput, r.Folder, dir); filepath.Base(r.CrashOutput) != r.CrashOutput || strings.Contains(r.CrashOutput, "/") {
		r.CrashOutput = ""
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("harness: encode result: %w", err)
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
		return r, fmt.Errorf("%w: %s: format %q, want %q (written by another version of the harness? rerun the gate with this one)", errBadResult, path, r.Format, resultFormat)
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

// ReadResults reads every *.json result file in dir, in file name order,
// each with Folder set to dir. An empty directory is an error: a gate
// that wrote nothing did not run.
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
		r.Folder = dir
		out = append(out, r)
	}
	return out, nil
}
