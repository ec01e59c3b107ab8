package replay

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// Merge merges tapes from several lanes or shards into one, in a fixed
// order that does not depend on the order of inputs: events are sorted by
// Seq, ties broken by canonical identity, then the canonical record bytes.
// An event's canonical identity is (Seq, Lane): the position it claims in
// the run. Identical duplicates (same canonical record bytes, every field
// included) are dropped; two events with the same identity and different
// bytes are an ErrConflict error naming both. Merge is idempotent:
// Merge(Merge(x...), y) == Merge(x..., y) and Merge(m, m) == m for a merged
// m. The inputs are not modified.
func Merge(inputs ...[]events.Event) ([]events.Event, error) {
	type keyed struct {
		e   events.Event
		rec []byte
		in  int
		idx int
	}
	var all []keyed
	for in, evs := range inputs {
		for i, e := range evs {
			all = append(all, keyed{e: e, rec: events.AppendRecord(nil, e), in: in, idx: i})
		}
	}
	slices.SortStableFunc(all, func(a, b keyed) int {
		if c := cmp.Compare(a.e.Seq, b.e.Seq); c != 0 {
			return c
		}
		if c := strings.Compare(a.e.Lane, b.e.Lane); c != 0 {
			return c
		}
		return bytes.Compare(a.rec, b.rec)
	})
	out := make([]events.Event, 0, len(all))
	for i, k := range all {
		if i > 0 {
			p := all[i-1]
			if p.e.Seq == k.e.Seq && p.e.Lane == k.e.Lane {
				if bytes.Equal(p.rec, k.rec) {
					continue
				}
				return nil, fmt.Errorf("%w: seq %d lane %q: input %d event %d (%s, payload %s) and input %d event %d (%s, payload %s) differ; find which source is wrong with: replay diff",
					ErrConflict, k.e.Seq, k.e.Lane, p.in, p.idx, excerpt.Quote(string(p.e.Kind)), p.e.PayloadDigest, k.in, k.idx, excerpt.Quote(string(k.e.Kind)), k.e.PayloadDigest)
			}
		}
		out = append(out, k.e)
	}
	return out, nil
}
