package replay

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"

	"github.com/kr/pretty"

	"github.com/codegenie/codegenie/events"
)

// Side describes one bundle of a diff.
type Side struct {
	Path        string        `json:"path"`
	Digest      events.Digest `json:"bundle_digest"` // blake3 of manifest.json; zero if not read from disk
	Metadata    Metadata      `json:"metadata"`
	Events      int           `json:"events"`
	ChainDigest events.Digest `json:"chain_digest"`
}

// DiffReport is the comparison of two bundles, as data: Text renders it for
// people and encoding/json for machines. The event comparison is
// events.Compare with the nondeterministic fields stripped, the same code
// the determinism gate uses, so the two always agree.
type DiffReport struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// Stripped names the fields left out of the comparison.
	Stripped string `json:"stripped"`
	// MetadataDiff lists the metadata fields that differ (kr/pretty.Diff),
	// for context: only events decide a divergence.
	MetadataDiff []string `json:"metadata_diff,omitempty"`
	// Divergence is the first divergent event with its field diff and
	// causal chain, or nil when the runs do not diverge.
	Divergence *events.Divergence `json:"divergence"`
}

// Diverged reports whether the runs diverge.
func (d *DiffReport) Diverged() bool { return d.Divergence != nil }

// Diff is Options.Diff with the default Options.
func Diff(ctx context.Context, pathA, pathB string) (*DiffReport, error) {
	return Options{}.Diff(ctx, pathA, pathB)
}

// Diff loads and verifies the bundles at pathA and pathB and compares their
// events. A bundle that does not verify is an error, never a divergence.
// Both tapes are held in memory (events.Compare works on slices), within
// one MaxBufferedBlobs for the two.
func (o Options) Diff(ctx context.Context, pathA, pathB string) (*DiffReport, error) {
	mem := o.newBudget()
	a, da, err := load(ctx, pathA, o, mem)
	if err != nil {
		return nil, err
	}
	b, db, err := load(ctx, pathB, o, mem)
	if err != nil {
		return nil, err
	}
	d := CompareBundles(pathA, a, pathB, b)
	d.A.Digest, d.B.Digest = da, db
	return d, nil
}

// CompareBundles compares two loaded bundles; the paths only label them and
// the sides' bundle digests are left zero (Diff fills them in).
func CompareBundles(pathA string, a *Bundle, pathB string, b *Bundle) *DiffReport {
	side := func(p string, x *Bundle) Side {
		return Side{Path: p, Metadata: x.Metadata, Events: len(x.Events), ChainDigest: events.ChainDigest(x.Events)}
	}
	d := &DiffReport{A: side(pathA, a), B: side(pathB, b), Stripped: events.Nondeterministic.String()}
	d.MetadataDiff = pretty.Diff(a.Metadata, b.Metadata)
	d.Divergence = events.Compare(a.Events, b.Events, events.Nondeterministic)
	return d
}

// Text writes d for people: both bundles, the metadata differences, the
// divergence (events.Divergence.Text) and the command that reproduces it.
func (d *DiffReport) Text(w io.Writer) error {
	var sb strings.Builder
	for _, s := range []struct {
		name string
		Side
	}{{"a", d.A}, {"b", d.B}} {
		fmt.Fprintf(&sb, "%s: %s\n   scenario %q", s.name, s.Path, s.Metadata.Scenario)
		if s.Metadata.Run != "" {
			fmt.Fprintf(&sb, " run %q", s.Metadata.Run)
		}
		fmt.Fprintf(&sb, ", %d events, status %s, run_key %s, chain digest %s\n", s.Events, s.Metadata.Status, excerpt.Quote(s.Metadata.Pin.RunKey), s.ChainDigest)
	}
	if len(d.MetadataDiff) > 0 {
		sb.WriteString("metadata differs (a != b):\n")
		for _, l := range d.MetadataDiff {
			fmt.Fprintf(&sb, "   %s\n", l)
		}
	}
	fmt.Fprintf(&sb, "compared with %s stripped\n", d.Stripped)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	if err := d.Divergence.Text(w); err != nil {
		return err
	}
	if d.Diverged() {
		_, err := fmt.Fprintf(w, "reproduce: %s\n", hint.Tool("replay", "diff", d.A.Path, d.B.Path))
		return err
	}
	return nil
}
