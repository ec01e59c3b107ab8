package bundle

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// RunRef names one run of a bundle on disk: the bundle at Path and its run
// Run; an empty Run means the bundle's only run.
type RunRef struct {
	Path string `json:"path"`
	Run  string `json:"run"`
}

// Side describes one run of a diff.
type Side struct {
	Path         string            `json:"path"`
	Digest       events.Digest     `json:"bundle_digest"` // blake3 of manifest.json; zero if not read from disk
	Metadata     Metadata          `json:"metadata"`
	Run          string            `json:"run"`
	Pin          map[string]string `json:"pin,omitempty"`
	Error        string            `json:"error,omitempty"`
	Events       int               `json:"events"`
	ChainDigest  events.Digest     `json:"chain_digest"` // events.Chain with events.Nondeterministic stripped
	OutputDigest events.Digest     `json:"output_digest"`
	OutputSize   int               `json:"output_size"`
}

// OutputDiff is where the outputs of two runs first differ. The harness
// reports it for the two largest classes of a gate, and Diff for two runs
// of bundles.
type OutputDiff struct {
	Offset int `json:"offset"` // the first differing byte
	LenA   int `json:"len_a"`
	LenB   int `json:"len_b"`
	// DigestA and DigestB are the outputs' digests; zero in a DiffReport,
	// whose sides carry them.
	DigestA  events.Digest `json:"digest_a,omitzero"`
	DigestB  events.Digest `json:"digest_b,omitzero"`
	ExcerptA string        `json:"excerpt_a"` // escaped windows around Offset
	ExcerptB string        `json:"excerpt_b"`
}

// DiffReport is the comparison of two runs, as data: Text renders it for
// people and encoding/json for machines. The event comparison is
// events.Compare with the nondeterministic fields stripped, the same code
// the determinism gate uses, so the two always agree; the outputs and the
// errors of the runs are compared too.
type DiffReport struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// Stripped names the fields left out of the comparison.
	Stripped string `json:"stripped"`
	// MetadataDiff and PinDiff list the fields that differ, sorted by
	// name, one `name: "a" != "b"` line each, for context: they decide no
	// divergence.
	MetadataDiff []string `json:"metadata_diff,omitempty"`
	PinDiff      []string `json:"pin_diff,omitempty"`
	// Divergence is the first divergent event with its field diff and
	// causal chain, or nil when the events do not diverge.
	Divergence *events.Divergence `json:"divergence"`
	// Output is where the outputs differ, or nil.
	Output *OutputDiff `json:"output,omitempty"`
	// ErrorDiffers says that one run ended in an error the other did not
	// end in (Side.Error).
	ErrorDiffers bool `json:"error_differs,omitempty"`
}

// Diverged reports whether the runs diverge: in their events, their
// output or their error.
func (d *DiffReport) Diverged() bool { return d.Divergence != nil || d.Output != nil || d.ErrorDiffers }

// Diff loads and verifies the bundles of a and b (once when they are the
// same bundle) and compares the two runs. A bundle that does not verify is
// an error, never a divergence. Both runs are held in memory, within one
// MaxBufferedBlobs for the two bundles.
func (c Config) Diff(ctx context.Context, a, b RunRef) (*DiffReport, error) {
	mem := c.newBudget()
	ba, da, err := load(ctx, a.Path, c, mem)
	if err != nil {
		return nil, err
	}
	bb, db := ba, da
	if b.Path != a.Path {
		if bb, db, err = load(ctx, b.Path, c, mem); err != nil {
			return nil, err
		}
	}
	idsA, idsB := runIDs(ba.Runs), runIDs(bb.Runs)
	example := func(string) []string { return diffExample(a, idsA, b, idsB) }
	ia, err := pickRun(a, idsA, "diff", example)
	if err != nil {
		return nil, err
	}
	ib, err := pickRun(b, idsB, "diff", example)
	if err != nil {
		return nil, err
	}
	d := compareRuns(a.Path, ba.Metadata, &ba.Runs[ia], b.Path, bb.Metadata, &bb.Runs[ib])
	d.A.Digest, d.B.Digest = da, db
	return d, nil
}

// diffExample returns the arguments of a bundle diff that compares runs
// of a and b that exist: the ones named where they exist, else the first
// (for b in a's bundle, the second).
func diffExample(a RunRef, idsA []string, b RunRef, idsB []string) []string {
	pick := func(ref RunRef, ids []string, skip int) string {
		if slices.Contains(ids, ref.Run) {
			return ref.Run
		}
		return ids[min(skip, len(ids)-1)]
	}
	x := pick(a, idsA, 0)
	skip := 0
	if b.Path == a.Path {
		skip = 1
	}
	return (&DiffReport{A: Side{Path: a.Path, Run: x}, B: Side{Path: b.Path, Run: pick(b, idsB, skip)}}).args()
}

// runChoiceError says which run to name: a run ref did not name one of
// its bundle's runs. It wraps errMissing.
type runChoiceError struct{ msg string }

func (e *runChoiceError) Error() string { return e.msg }
func (e *runChoiceError) Unwrap() error { return errMissing }

// pickRun returns the index of the run ref names among ids, the IDs of a
// bundle's runs. When ref names none of them, the error lists them and
// ends with the command example returns (given the first ID) for op.
func pickRun(ref RunRef, ids []string, op string, example func(first string) []string) (int, error) {
	if ref.Run == "" && len(ids) == 1 {
		return 0, nil
	}
	for i, id := range ids {
		if id == ref.Run {
			return i, nil
		}
	}
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = excerpt.Quote(id)
	}
	msg := fmt.Sprintf("no run %s; the bundle holds %s", excerpt.Quote(ref.Run), strings.Join(quoted, ", "))
	if ref.Run == "" {
		msg = fmt.Sprintf("the bundle holds %d runs (%s): name one of them", len(ids), strings.Join(quoted, ", "))
	}
	if len(ids) > 0 && example != nil {
		msg += "; for example: " + hint.Tool("bundle", example(ids[0])...)
	}
	return 0, &BundleError{Path: ref.Path, Record: -1, Op: op, Err: &runChoiceError{msg}}
}

func runIDs(runs []Run) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// compareRuns compares two runs in memory; the paths and metadata only
// label them, and the sides' bundle digests are left zero (Diff fills them
// in).
func compareRuns(pathA string, metaA Metadata, a *Run, pathB string, metaB Metadata, b *Run) *DiffReport {
	side := func(p string, m Metadata, r *Run) Side {
		return Side{Path: p, Metadata: m, Run: r.ID, Pin: r.Pin, Error: r.Error, Events: len(r.Events),
			ChainDigest: events.Chain(r.Events, events.Nondeterministic), OutputDigest: events.Sum(r.Output), OutputSize: len(r.Output)}
	}
	d := &DiffReport{A: side(pathA, metaA, a), B: side(pathB, metaB, b), Stripped: events.Nondeterministic.String()}
	d.MetadataDiff = jsondiff.PinLines(metaA.fields(), metaB.fields())
	d.PinDiff = jsondiff.PinLines(a.Pin, b.Pin)
	d.Divergence = events.Compare(a.Events, b.Events, events.Nondeterministic)
	d.Output = compareOutputs(a.Output, b.Output)
	d.ErrorDiffers = a.Error != b.Error
	return d
}

func compareOutputs(a, b []byte) *OutputDiff {
	if bytes.Equal(a, b) {
		return nil
	}
	off, _ := excerpt.FirstDiff(a, b)
	return &OutputDiff{Offset: off, LenA: len(a), LenB: len(b),
		ExcerptA: excerpt.Around(a, off, excerptRadius), ExcerptB: excerpt.Around(b, off, excerptRadius)}
}

// excerptRadius is the bytes shown on each side of a differing offset.
const excerptRadius = 48

// Text writes d for people: both runs, the metadata and pin differences,
// the divergence (events.Divergence.Text), the outputs and errors, and
// the command that reproduces it.
func (d *DiffReport) Text(w io.Writer) error {
	var sb strings.Builder
	for _, s := range []struct {
		name string
		Side
	}{{"a", d.A}, {"b", d.B}} {
		fmt.Fprintf(&sb, "%s: %s run %s\n   scenario %s, %d events, chain digest %s, output %d bytes %s\n",
			s.name, s.Path, excerpt.Quote(s.Run), excerpt.Quote(s.Metadata.Scenario), s.Events, s.ChainDigest, s.OutputSize, s.OutputDigest)
		if s.Error != "" {
			first, _, more := strings.Cut(s.Error, "\n")
			fmt.Fprintf(&sb, "   error: %s", excerpt.Escape(first))
			if more {
				sb.WriteString(" …")
			}
			sb.WriteString("\n")
		}
	}
	for _, l := range []struct {
		what  string
		lines []string
	}{{"metadata", d.MetadataDiff}, {"pins", d.PinDiff}} {
		if len(l.lines) > 0 {
			fmt.Fprintf(&sb, "%s differ (a != b):\n", l.what)
			for _, line := range l.lines { // jsondiff.PinLines quotes what needs it
				fmt.Fprintf(&sb, "   %s\n", line)
			}
		}
	}
	fmt.Fprintf(&sb, "compared with %s stripped\n", d.Stripped)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	sb.Reset()
	if d.Divergence != nil || !d.Diverged() {
		if err := d.Divergence.Text(&sb); err != nil {
			return err
		}
	} else {
		sb.WriteString("the events do not diverge\n")
	}
	if o := d.Output; o != nil {
		fmt.Fprintf(&sb, "outputs differ at byte %d (a: %d bytes, b: %d bytes)\n    a: %s\n    b: %s\n", o.Offset, o.LenA, o.LenB, o.ExcerptA, o.ExcerptB)
	}
	if d.ErrorDiffers {
		sb.WriteString("errors differ:\n")
		for _, s := range []struct{ name, err string }{{"a", d.A.Error}, {"b", d.B.Error}} {
			writeError(&sb, s.name, s.err)
		}
	}
	if d.Diverged() {
		fmt.Fprintf(&sb, "reproduce: %s\n", hint.Tool("bundle", d.args()...))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeError writes the error of side name line by line, each line
// escaped, as the gate's report shows it (a cassette miss: the request,
// and how it differs from its recording, field by field).
func writeError(sb *strings.Builder, name, err string) {
	if err == "" {
		fmt.Fprintf(sb, "    %s: (none)\n", name)
		return
	}
	fmt.Fprintf(sb, "    %s:\n", name)
	for l := range strings.SplitSeq(strings.TrimRight(err, "\n"), "\n") {
		fmt.Fprintf(sb, "      %s\n", excerpt.Escape(l))
	}
}

// args are the arguments of cmd/bundle that compare the same runs.
func (d *DiffReport) args() []string {
	args := []string{"diff", d.A.Path}
	if d.B.Path != d.A.Path {
		args = append(args, d.B.Path)
	}
	return append(args, "-runs", d.A.Run+","+d.B.Run)
}
