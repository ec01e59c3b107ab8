package ledger

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/codegenie/codegenie/gate"
)

// FlakeReport is what Flakes found: the tallies, and what it read but
// could not tally, so that a ledger written by a newer version is counted
// rather than misread.
type FlakeReport struct {
	// Flakes has one Flake per scenario and path, sorted by scenario then
	// path.
	Flakes []Flake `json:"flakes"`
	// UnknownSchema counts the verdict entries of a schema this version
	// does not know (not 1 or 2): their fields were read leniently,
	// and they are tallied when their verdict is known.
	UnknownSchema int `json:"unknown_schema,omitempty"`
	// UnknownVerdict counts the verdict entries whose verdict is none of
	// the three this version knows; each is counted in its Flake's Unknown.
	UnknownVerdict int `json:"unknown_verdict,omitempty"`
}

// Flake is the verdict history of one scenario and path: how many gate
// verdicts of each kind, and the first and last seq of each.
type Flake struct {
	Scenario string `json:"scenario"`
	Path     string `json:"path,omitempty"`
	// Verdicts has one Tally per verdict, PASS, NONDETERMINISTIC, BROKEN,
	// with zero counts included.
	Verdicts []Tally `json:"verdicts"`
	// Unknown counts verdicts that are none of the three (written by a
	// newer schema).
	Unknown int `json:"unknown,omitempty"`
}

// Tally counts one verdict; First and Last are 0 when Count is.
type Tally struct {
	Verdict gate.Verdict `json:"verdict"`
	Count   int          `json:"count"`
	First   uint64       `json:"first,omitempty"`
	Last    uint64       `json:"last,omitempty"`
}

// knownVerdicts are the verdicts a Flake tallies, in its order.
var knownVerdicts = [...]gate.Verdict{gate.Pass, gate.Nondeterministic, gate.Broken}

// Flaky reports whether the scenario has had any verdict but PASS.
func (f Flake) Flaky() bool {
	return f.Unknown > 0 || slices.ContainsFunc(f.Verdicts, func(t Tally) bool { return t.Verdict != gate.Pass && t.Count > 0 })
}

// Flakes tallies the gate verdicts (kind verdict; reruns and admin entries
// are not verdicts of the gate) with seq >= since, per scenario and path.
// Entries of a newer schema and verdicts it does not know are counted in
// the report, never guessed at.
func (s *Store) Flakes(ctx context.Context, since uint64) (*FlakeReport, error) {
	rep := &FlakeReport{}
	by := map[[2]string]*Flake{}
	err := s.Entries(ctx, since, 0, func(e Entry) error {
		if e.Kind != kindVerdict {
			return nil
		}
		if !knownSchema(e.Schema) {
			rep.UnknownSchema++
		}
		k := [2]string{e.Scenario, e.Path}
		f := by[k]
		if f == nil {
			f = &Flake{Scenario: e.Scenario, Path: e.Path}
			for _, v := range knownVerdicts {
				f.Verdicts = append(f.Verdicts, Tally{Verdict: v})
			}
			by[k] = f
		}
		i := slices.Index(knownVerdicts[:], e.Verdict)
		if i < 0 {
			f.Unknown++
			rep.UnknownVerdict++
			return nil
		}
		t := &f.Verdicts[i]
		t.Count++
		if t.First == 0 {
			t.First = e.Seq
		}
		t.Last = e.Seq
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Flakes = make([]Flake, 0, len(by))
	for _, f := range by {
		rep.Flakes = append(rep.Flakes, *f)
	}
	slices.SortFunc(rep.Flakes, func(a, b Flake) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Path, b.Path))
	})
	return rep, nil
}

// Text writes the report for people: a table, with an UNKNOWN column when
// some verdict was unknown, then a note for each count of what was not
// tallied.
func (r *FlakeReport) Text(w io.Writer) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := "SCENARIO\tPATH\tPASS\tNONDETERMINISTIC\tBROKEN"
	if r.UnknownVerdict > 0 {
		head += "\tUNKNOWN"
	}
	fmt.Fprintln(tw, head)
	for _, f := range r.Flakes {
		cells := []string{display(f.Scenario), display(f.Path)}
		for _, t := range f.Verdicts {
			c := "0"
			if t.Count > 0 {
				c = fmt.Sprintf("%d (seq %d..%d)", t.Count, t.First, t.Last)
			}
			cells = append(cells, c)
		}
		if r.UnknownVerdict > 0 {
			cells = append(cells, strconv.Itoa(f.Unknown))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if r.UnknownSchema > 0 {
		fmt.Fprintf(&b, "note: %d verdict entries have a schema other than 1 or %d; their fields were read leniently (a newer ledger command reads them fully)\n", r.UnknownSchema, schemaVersion)
	}
	if r.UnknownVerdict > 0 {
		fmt.Fprintf(&b, "note: %d verdicts are not PASS, NONDETERMINISTIC or BROKEN; they are counted under UNKNOWN (a newer ledger command knows them)\n", r.UnknownVerdict)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// display returns s as it is when it is plain printable text without tabs,
// else quoted, so that ledger contents cannot drive a terminal.
func display(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '\t' {
			return strconv.Quote(s)
		}
	}
	return s
}
