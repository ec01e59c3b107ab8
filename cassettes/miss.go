package cassettes

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// miss explains why no recorded interaction serves cr. candidates are the
// interactions with cr's key, in file order; c.mu is held.
func (c *Cassette) miss(cr *canonRequest, candidates []int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (body blake3 %s)", cr.method, redactURL(cr.url), cr.bodyDigest())
	line, sentinel := 0, ErrInteractionNotFound
	agreeing := 0
	for _, i := range candidates {
		if headerConflict(c.p.canon[i].headers, cr.headers) < 0 {
			agreeing++
			line = c.p.lines[i]
		}
	}
	switch {
	case agreeing > 0 && c.usedUp():
		sentinel = ErrExhausted
		fmt.Fprintf(&b, "\nevery one of the cassette's %d recorded interactions was already replayed by this Cassette, the last with this request at line %d: a Cassette serves one run, so open it per run (a fresh Open for each run), not once for many", len(c.state), line)
	case agreeing > 0:
		fmt.Fprintf(&b, "\nall %d recorded interactions with this request were already replayed (the last at line %d): the code under test sent this request more often than when the cassette was recorded", agreeing, line)
	case len(candidates) > 0:
		i := candidates[0]
		line = c.p.lines[i]
		h := headerConflict(c.p.canon[i].headers, cr.headers)
		fmt.Fprintf(&b, "\nrecorded interaction %d (line %d) has this method, URL and body, but the header %s differs: recorded %q, requested %q; a header sent and recorded with different values changes what is asked, so it is a miss (a header the recording lacks is not)",
			i, line, matchHeaders[h], c.p.canon[i].headers[h], cr.headers[h])
	default:
		line = c.describeNearest(&b, cr)
	}
	if sentinel != ErrExhausted {
		fmt.Fprintf(&b, "\nif the request change is intended, re-record with: %s", c.hint)
	}
	msg := maskSecrets(b.String(), c.opts.APIKey)
	return newErr(c.path, line, "replay", &missError{detailError{sentinel: sentinel, msg: sentinel.Error() + ": " + msg}})
}

// usedUp reports whether every interaction is busy; c.mu is held.
func (c *Cassette) usedUp() bool {
	for _, s := range c.state {
		if !s.busy {
			return false
		}
	}
	return true
}

// describeNearest writes the nearest recorded interaction and how it
// differs from cr, and returns its line (0 for an empty cassette).
func (c *Cassette) describeNearest(b *strings.Builder, cr *canonRequest) int {
	n := c.nearest(cr)
	if n < 0 {
		b.WriteString("\nthe cassette has no interactions")
		return 0
	}
	line := c.p.lines[n]
	rc := c.p.canon[n]
	fmt.Fprintf(b, "\nnearest recorded interaction: %d (line %d): %s %s (body blake3 %s)", n, line, rc.method, redactURL(rc.url), rc.bodyDigest())
	if rc.method != cr.method {
		fmt.Fprintf(b, "\n  method: recorded %s, requested %s", rc.method, cr.method)
	}
	if rc.url != cr.url {
		fmt.Fprintf(b, "\n  url: recorded %s, requested %s", redactURL(rc.url), redactURL(cr.url))
	}
	if h := headerConflict(rc.headers, cr.headers); h >= 0 {
		fmt.Fprintf(b, "\n  header %s: recorded %q, requested %q", matchHeaders[h], rc.headers[h], cr.headers[h])
	}
	if !bytes.Equal(rc.body, cr.body) {
		// Mask whole bodies before any excerpt: an excerpt can start
		// inside a secret, where no rule would recognise it.
		recBody := []byte(maskSecrets(string(rc.body), c.opts.APIKey))
		reqBody := []byte(maskSecrets(string(cr.body), c.opts.APIKey))
		diff := jsondiff.Lines(recBody, reqBody)
		if diff == nil {
			off, _ := excerpt.FirstDiff(recBody, reqBody)
			diff = []string{fmt.Sprintf("(body) differs at byte %d: recorded %s, requested %s", off,
				excerpt.Around(recBody, off, excerpt.Radius), excerpt.Around(reqBody, off, excerpt.Radius))}
		}
		const maxLines = 20
		if len(diff) > maxLines {
			diff = append(diff[:maxLines:maxLines], fmt.Sprintf("... and %d more differences", len(diff)-maxLines))
		}
		fmt.Fprintf(b, "\n  body (recorded vs requested):\n    %s", strings.Join(diff, "\n    "))
	}
	return line
}

// nearest picks the recorded request most like cr, by content alone
// (never by which interactions were served, so under concurrency it is the
// request this one was meant to be): same method, then same URL, then
// agreeing meaningful headers, then the fewest differing body fields,
// then the fewest differing body bytes (outside the longest common prefix
// and suffix of the canonical bodies), then file order.
func (c *Cassette) nearest(cr *canonRequest) int {
	best := -1
	var bestScore [5]int
	for i, rc := range c.p.canon {
		var score [5]int
		if rc.method != cr.method {
			score[0] = 1
		}
		if rc.url != cr.url {
			score[1] = 1
		}
		if headerConflict(rc.headers, cr.headers) >= 0 {
			score[2] = 1
		}
		if !bytes.Equal(rc.body, cr.body) {
			d := len(jsondiff.Lines(rc.body, cr.body))
			if d == 0 {
				d = 1 << 20 // not both JSON: compared by bytes only
			}
			score[3] = d
			score[4] = byteDistance(rc.body, cr.body)
		}
		if best < 0 || slices.Compare(score[:], bestScore[:]) < 0 {
			best, bestScore = i, score
		}
	}
	return best
}

// byteDistance is how many bytes of a and b lie outside their longest
// common prefix and suffix: small when one edit separates them.
func byteDistance(a, b []byte) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return len(a) + len(b) - 2*(p+s)
}
