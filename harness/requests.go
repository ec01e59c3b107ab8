package harness

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// sentRequest is one request a run sent through a Run's client: its
// digest (method, URL and body), enough of it to show how two runs'
// requests differ, and whether it missed the cassette.
type sentRequest struct {
	Digest events.Digest `json:"digest"`
	Method string        `json:"method"`
	URL    string        `json:"url"`
	// Body is the first maxKeptBody bytes of the body.
	Body   []byte `json:"body,omitempty"`
	Missed bool   `json:"missed,omitempty"`
	// Change is, for a request that missed, how it differs from its
	// recording (cassettes.MissError.Change).
	Change string `json:"change,omitempty"`
	// When Identical (> 1) recorded interactions matched the request:
	// the lane it was sent from ("" for none), its 0-based order among
	// that lane's requests that several interactions matched, and the
	// interaction (0-based) and line that answered it.
	Lane        string `json:"lane,omitempty"`
	LaneOrder   int    `json:"lane_order,omitempty"`
	Identical   int    `json:"identical,omitempty"`
	Interaction int    `json:"interaction,omitempty"`
	Line        int    `json:"line,omitempty"`
}

// maxKeptBody bounds the body a sentRequest keeps.
const maxKeptBody = 64 << 10

// readRequest returns the record of req (digest over method, URL and
// body, each length-prefixed) and req with its body restored.
func readRequest(req *http.Request) (sentRequest, *http.Request, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return sentRequest{}, nil, fmt.Errorf("harness: read request body: %w", err)
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	u := req.URL.String()
	var buf []byte
	for _, part := range [][]byte{[]byte(req.Method), []byte(u), body} {
		buf = fmt.Appendf(buf, "%d:", len(part))
		buf = append(buf, part...)
	}
	kept := body[:min(len(body), maxKeptBody):min(len(body), maxKeptBody)]
	return sentRequest{Digest: events.Sum(buf), Method: req.Method, URL: u, Body: bytes.Clone(kept)}, req, nil
}

// missedKey is the identity of the misses of reqs by what they mean: the
// set of their changes (cassettes.MissError.Change), so runs whose misses
// one change explains agree whichever of several concurrent requests
// missed, and how often; zero when none missed.
func missedKey(reqs []sentRequest) events.Digest {
	var cs []string
	for _, r := range reqs {
		if r.Missed {
			cs = append(cs, r.Change)
		}
	}
	if len(cs) == 0 {
		return events.Digest{}
	}
	slices.Sort(cs)
	return events.Sum([]byte(strings.Join(slices.Compact(cs), "\n")))
}

// requestsDiffer compares what two runs sent as sets of requests,
// whatever order they were sent in: it returns, when each run sent a
// request the other never sent (the request itself varies), the pair of
// such requests, one of each run, that differ least (first by method and
// URL, then by the bytes of the bodies outside their common prefix and
// suffix, then by differing body fields; ties go to the first in
// missing's order), and ok false otherwise. Bytes come before fields: a
// request that lacks a whole subtree differs in few fields but many
// bytes. A run that stopped early or repeated a request sent nothing the
// other lacks, so it is not said to vary.
func requestsDiffer(a, b []sentRequest) (x, y sentRequest, ok bool) {
	onlyA, onlyB := missing(a, b), missing(b, a)
	if len(onlyA) == 0 || len(onlyB) == 0 {
		return x, y, false
	}
	var best [3]int
	for i, p := range onlyA[:min(len(onlyA), maxRequestPairs)] {
		for j, q := range onlyB[:min(len(onlyB), maxRequestPairs)] {
			var score [3]int
			if q.URL != p.URL || q.Method != p.Method {
				score[0] = 1
			}
			score[1] = differingBytes(p.Body, q.Body)
			score[2] = len(jsondiff.Lines(p.Body, q.Body))
			if (i == 0 && j == 0) || slices.Compare(score[:], best[:]) < 0 {
				x, y, best = p, q, score
			}
		}
	}
	return x, y, true
}

// differingBytes is the number of bytes of the longer of a and b outside
// their common prefix and suffix.
func differingBytes(a, b []byte) int {
	n := min(len(a), len(b))
	pre := 0
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return max(len(a), len(b)) - pre - suf
}

// maxRequestPairs bounds the requests of each run requestsDiffer pairs.
const maxRequestPairs = 32

// missing returns the requests of a whose digest b never sent, ordered
// by method, URL and digest.
func missing(a, b []sentRequest) []sentRequest {
	in := map[events.Digest]bool{}
	for _, r := range b {
		in[r.Digest] = true
	}
	var out []sentRequest
	for _, r := range a {
		if !in[r.Digest] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(p, q sentRequest) int {
		return cmp.Or(cmp.Compare(p.Method, q.Method), cmp.Compare(p.URL, q.URL), bytes.Compare(p.Digest[:], q.Digest[:]))
	})
	return out
}

// maxRequestDiff bounds the lines of a request diff.
const maxRequestDiff = 20

// requestDiff lists how request x differs from y, one line a field,
// masked.
func requestDiff(x, y sentRequest, key string) []string {
	var out []string
	if x.Method != y.Method {
		out = append(out, fmt.Sprintf("method: %s != %s", x.Method, y.Method))
	}
	if x.URL != y.URL {
		out = append(out, fmt.Sprintf("url: %s != %s", maskText(x.URL, key), maskText(y.URL, key)))
	}
	bx, by := []byte(maskText(string(x.Body), key)), []byte(maskText(string(y.Body), key))
	lines := jsondiff.Lines(bx, by)
	if lines == nil && !bytes.Equal(bx, by) {
		off, _ := excerpt.FirstDiff(bx, by)
		lines = []string{fmt.Sprintf("differs at byte %d: %s != %s", off, excerpt.Around(bx, off, excerpt.Radius), excerpt.Around(by, off, excerpt.Radius))}
	}
	for _, l := range lines {
		out = append(out, "body "+l)
	}
	if len(out) > maxRequestDiff {
		out = append(out[:maxRequestDiff:maxRequestDiff], fmt.Sprintf("... and %d more differences", len(out)-maxRequestDiff))
	}
	return out
}
