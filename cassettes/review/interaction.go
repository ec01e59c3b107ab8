package review

import (
	"cmp"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// pair is one interaction of the review: positions in the old and the
// new cassette, -1 when absent.
type pair struct{ old, new int }

// maxCandidates bounds the old interactions one new interaction is
// compared with when no request key matches.
const maxCandidates = 16

// pairUp pairs old and new interactions: equal request keys first, each
// in file order (as replay serves them); then, among the interactions
// left, the old and new ones of the same method and URL whose bodies are
// nearest: fewest differing fields, then fewest differing bytes, then
// file order, so a pairing does not depend on the order a recording
// sorted its interactions in. What is left is new or removed. Pairs come
// in the new file's order, removed ones last.
func pairUp(old, cur []cassettes.Recorded) []pair {
	used := make([]bool, len(old))
	byKey := map[string][]int{}
	for i, r := range old {
		byKey[r.Key] = append(byKey[r.Key], i)
	}
	pairs := make([]pair, len(cur))
	for j, r := range cur {
		pairs[j] = pair{-1, j}
		if q := byKey[r.Key]; len(q) > 0 {
			pairs[j].old, byKey[r.Key] = q[0], q[1:]
			used[q[0]] = true
		}
	}
	var cands []candidate
	for j, r := range cur {
		if pairs[j].old >= 0 {
			continue
		}
		tried := 0
		for i, o := range old {
			if used[i] || o.Method != r.Method || o.URL != r.URL {
				continue
			}
			cands = append(cands, candidate{old: i, new: j,
				fields: bodyDistance(o.RequestBody, r.RequestBody), bytes: byteDistance(o.RequestBody, r.RequestBody)})
			if tried++; tried == maxCandidates {
				break
			}
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.fields, b.fields), cmp.Compare(a.bytes, b.bytes), cmp.Compare(a.new, b.new), cmp.Compare(a.old, b.old))
	})
	for _, c := range cands {
		if used[c.old] || pairs[c.new].old >= 0 {
			continue
		}
		pairs[c.new].old, used[c.old] = c.old, true
	}
	for i := range old {
		if !used[i] {
			pairs = append(pairs, pair{i, -1})
		}
	}
	return pairs
}

// candidate is a possible pairing of old interaction old with new
// interaction new, and how far apart their request bodies are.
type candidate struct{ old, new, fields, bytes int }

// bodyDistance is the number of differing JSON fields of two bodies (1
// for differing bodies that are not JSON).
func bodyDistance(a, b string) int {
	if a == b {
		return 0
	}
	if n := len(jsondiff.Lines([]byte(a), []byte(b))); n > 0 {
		return n
	}
	return 1
}

// byteDistance is the length of the longer of the two bodies' middles
// left once their common prefix and suffix are taken away.
func byteDistance(a, b string) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return max(len(a), len(b)) - p - s
}

// maxDiffLines bounds the request diff lines kept per interaction.
const maxDiffLines = 200

// A masker hides every secret the cassettes package's rules find, and
// each of its keys (the recording key), as cassettes.Mask does.
type masker []string

func (keys masker) mask(s string) string { return cassettes.Mask(s, keys...) }

// compareInteraction reviews one pair; o or n may be nil.
func compareInteraction(o, n *cassettes.Recorded, prices *Prices, maxText int, mk masker) Interaction {
	var in Interaction
	var before, after *Message
	if o != nil {
		in.Method, in.URL, in.OldLine = mk.mask(o.Method), mk.mask(o.URL), o.Line
		m := foldMasked(*o, mk)
		before = &m
	}
	if n != nil {
		in.Method, in.URL, in.NewLine = mk.mask(n.Method), mk.mask(n.URL), n.Line
		m := foldMasked(*n, mk)
		after = &m
	}
	switch {
	case o == nil:
		in.Change, in.Drift = "added", New
	case n == nil:
		in.Change, in.Drift = "removed", Removed
	default:
		in.Drift, in.Why = classify(o, n, before, after, mk)
		in.Change = "changed"
		if in.Drift == Unchanged {
			in.Change = "unchanged"
		}
		if o.Key != n.Key || o.RequestBody != n.RequestBody {
			in.RequestDiff = requestDiff(o, n, mk)
		}
		if before.Text != after.Text {
			in.TextDiff = wordDiff(before.Text, after.Text)
		}
	}
	for _, side := range []struct {
		m    *Message
		r    *cassettes.Recorded
		cost *int64
	}{{before, o, &in.Cost.Before}, {after, n, &in.Cost.After}} {
		if side.m == nil {
			continue
		}
		model := side.m.Model
		if model == "" {
			model = mk.mask(requestModel(side.r.RequestBody))
		}
		if mp, ok := prices.Lookup(model); ok {
			*side.cost = mp.Cost(side.m.Usage)
			if mp.Unconfirmed != "" {
				in.Cost.Unconfirmed = append(in.Cost.Unconfirmed, model)
			}
		} else if side.m.Usage != (Usage{}) && !isOllama(side.m.API) {
			in.Cost.Unpriced = append(in.Cost.Unpriced, model)
		}
		side.m.Text, side.m.TextCut = keepText(side.m.Text, maxText)
		for i, c := range side.m.ToolCalls {
			side.m.ToolCalls[i].Arguments, _ = keepText(c.Arguments, maxText)
		}
	}
	in.Cost.add(Cost{})
	in.Before, in.After = before, after
	return in
}

// foldMasked folds r's response and masks every text it keeps.
func foldMasked(r cassettes.Recorded, mk masker) Message {
	m := fold(r)
	for _, s := range []*string{&m.Model, &m.Text, &m.StopReason, &m.ErrorType, &m.ErrorMessage} {
		*s = mk.mask(*s)
	}
	for i, c := range m.ToolCalls {
		m.ToolCalls[i] = ToolCall{ID: mk.mask(c.ID), Name: mk.mask(c.Name), Arguments: mk.mask(c.Arguments)}
	}
	return m
}

// classify gives the drift class of a pair present on both sides, and the
// facts behind it.
func classify(o, n *cassettes.Recorded, before, after *Message, mk masker) (Class, []string) {
	var why []string
	if o.Status != n.Status {
		why = append(why, fmt.Sprintf("status %d -> %d", o.Status, n.Status))
	}
	if before.ErrorType != after.ErrorType {
		why = append(why, fmt.Sprintf("error type %s -> %s", orNone(before.ErrorType), orNone(after.ErrorType)))
	}
	if len(why) > 0 {
		for i := range why {
			why[i] = mk.mask(why[i])
		}
		return Error, why
	}
	if a, b := mediaType(o), mediaType(n); a != b {
		why = append(why, fmt.Sprintf("response content type %s -> %s", orNone(a), orNone(b)))
	}
	why = append(why, shapeDiff("request", requestShape(*o), requestShape(*n))...)
	why = append(why, shapeDiff("response", responseShape(*o), responseShape(*n))...)
	if len(why) > 0 {
		for i := range why {
			why[i] = mk.mask(why[i])
		}
		return Schema, why
	}
	if o.Key != n.Key || o.Method != n.Method || o.URL != n.URL || o.ResponseBody != n.ResponseBody {
		return Content, nil
	}
	if why := timingDiff(o, n); len(why) > 0 {
		return timingChange, why
	}
	return Unchanged, nil
}

// timingDiff lists how n's recorded timing differs from o's: the
// duration, and the arrival of the first and the last frame of a stream.
func timingDiff(o, n *cassettes.Recorded) []string {
	var why []string
	if o.Duration != n.Duration {
		why = append(why, fmt.Sprintf("duration %v -> %v", o.Duration, n.Duration))
	}
	oo, no := o.FrameOffsets(), n.FrameOffsets()
	if slices.Equal(oo, no) {
		return why
	}
	edge := func(offs []time.Duration, last bool) string {
		switch {
		case len(offs) == 0:
			return "(none)"
		case last:
			return offs[len(offs)-1].String()
		}
		return offs[0].String()
	}
	return append(why, fmt.Sprintf("frames arrived: first at %s -> %s, last at %s -> %s",
		edge(oo, false), edge(no, false), edge(oo, true), edge(no, true)))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func mediaType(r *cassettes.Recorded) string {
	mt, _, err := mime.ParseMediaType(r.ResponseHeaders.Get("Content-Type"))
	if err != nil {
		return r.ResponseHeaders.Get("Content-Type")
	}
	return mt
}

// requestDiff lists how the request of n differs from o's: method and
// URL, then the body's fields, at most maxDiffLines of them. Bodies are
// masked whole before they are compared, so no excerpt holds part of a
// secret.
func requestDiff(o, n *cassettes.Recorded, mk masker) []string {
	var out []string
	if o.Method != n.Method || o.URL != n.URL {
		out = append(out, fmt.Sprintf("request line: %s %s != %s %s", mk.mask(o.Method), excerpt.Quote(mk.mask(o.URL)), mk.mask(n.Method), excerpt.Quote(mk.mask(n.URL))))
	}
	a, b := []byte(mk.mask(o.RequestBody)), []byte(mk.mask(n.RequestBody))
	lines := jsondiff.Lines(a, b)
	if lines == nil && string(a) != string(b) {
		off, _ := excerpt.FirstDiff(a, b)
		lines = []string{fmt.Sprintf("body: differs at byte %d: %q != %q", off,
			excerpt.Around(a, off, excerpt.Radius), excerpt.Around(b, off, excerpt.Radius))}
	}
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], "… "+strconv.Itoa(len(lines)-maxDiffLines)+" more differing fields")
	}
	return append(out, lines...)
}

// requestModel is the "model" of a JSON request body, or "".
func requestModel(body string) string {
	var m struct {
		Model string `json:"model"`
	}
	json.Unmarshal([]byte(body), &m)
	return m.Model
}
