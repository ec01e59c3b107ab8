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
)

// Flake is the verdict history of one scenario and path: how many gate
// verdicts of each kind, and the first and last seq of each.
type Flake struct {
	Scenario string `json:"scenario"`
	Path     string `json:"path,omitempty"`
	// Verdicts has one Tally per verdict, PASS, NONDETERMINISTIC, BROKEN,
	// with zero counts included.
	Verdicts []Tally `json:"verdicts"`
}

// Tally counts one verdict; First and Last are 0 when Count is.
type Tally struct {
	Verdict Verdict `json:"verdict"`
	Count   int     `json:"count"`
	First   uint64  `json:"first,omitempty"`
	Last    uint64  `json:"last,omitempty"`
}

// Flaky reports whether the scenario has had more than one kind of
// verdict or any verdict but PASS.
func (f Flake) Flaky() bool {
	return f.Verdicts[1].Count > 0 || f.Verdicts[2].Count > 0
}

// Flakes tallies the gate verdicts (kind verdict; replays and admin entries
// are not verdicts of the gate) with seq >= since, per scenario and path,
// sorted by scenario then path.
func Flakes(ctx context.Context, s Store, since uint64) ([]Flake, error) {
	by := map[[2]string]*Flake{}
	err := Entries(ctx, s, since, 0, func(e Entry) error {
		if e.Kind != KindVerdict {
			return nil
		}
		k := [2]string{e.Scenario, e.Path}
		f := by[k]
		if f == nil {
			f = &Flake{Scenario: e.Scenario, Path: e.Path, Verdicts: []Tally{{Verdict: Pass}, {Verdict: Nondeterministic}, {Verdict: Broken}}}
			by[k] = f
		}
		t := &f.Verdicts[slices.IndexFunc(f.Verdicts, func(t Tally) bool { return t.Verdict == e.Verdict })]
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
	out := make([]Flake, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Flake) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Path, b.Path))
	})
	return out, nil
}

// FlakesText writes a table of flakes for people.
func FlakesText(w io.Writer, flakes []Flake) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tPATH\tPASS\tNONDETERMINISTIC\tBROKEN")
	for _, f := range flakes {
		cells := []string{display(f.Scenario), display(f.Path)}
		for _, t := range f.Verdicts {
			c := "0"
			if t.Count > 0 {
				c = fmt.Sprintf("%d (seq %d..%d)", t.Count, t.First, t.Last)
			}
			cells = append(cells, c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
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
