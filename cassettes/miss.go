package cassettes

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// MissError is a replayed request that no recorded interaction of the
// cassette serves, as data: what was asked, the cassette, and how the
// request differs from the recorded interaction most like it (see Misses
// in the package documentation). It unwraps to ErrInteractionNotFound;
// Open's transport returns it wrapped in a *CassetteError. Its message
// ends with the command that re-records the cassette when one is known
// (Config.Hint, or the test that opened it with OpenT).
type MissError struct {
	// Method and URL are the request's, the URL's credentials redacted.
	Method string
	URL    string
	// Cassette is the cassette's path, as opened.
	Cassette string
	// Nearest is the recorded interaction (0-based) the miss is told
	// against, and Line its line in the cassette: the one most like the
	// request, or one with the request's key; -1 and 0 when there is
	// none (an empty cassette, or a credential lookup).
	Nearest int
	Line    int
	// Diff lists how the request differs from Nearest, one entry a part:
	// "method", "url", "header NAME", "body" (a body that is not JSON) or
	// "body " and a JSON field's location (body ["messages"][0]["content"]),
	// with the recorded and the requested value as shown: for strings the
	// words that differ, with "…" where the string goes on, else canonical
	// JSON or "(missing)" (jsondiff's edits). Secrets are masked.
	Diff []struct{ Field, Recorded, Requested string }
	// Served, when not 0, says the request has that many recorded
	// interactions, all of them already replayed: the code sent it more
	// often than when the cassette was recorded. Exhausted says every
	// interaction of the cassette was already replayed: a Cassette
	// serves one run, so open it per run.
	Served    int
	Exhausted bool
	// APIVersion says the request differs from Nearest only in the API
	// version its SDK sends (the Anthropic-Version header, a version
	// segment of the URL path such as v1beta, a beta query parameter):
	// the SDK was upgraded since the recording, and since a new API
	// version can change the answer, the cassette needs recording again.
	APIVersion bool
	// Credentials, when not empty, says the request asked a cloud
	// credential or metadata service (the EC2 instance metadata service,
	// STS, the GCE metadata server, ...) and what the SDK needs in replay
	// instead: recording again cannot fix it.
	Credentials string

	change       string   // see Change
	edits        []string // each Diff entry's change in full (jsondiff.Edit.Key)
	sameKey      bool     // Nearest has the request's key; a header differs
	body         string   // blake3 of the request's canonical body
	nearest      string   // the nearest interaction's method, URL and body digest
	interactions int      // in the cassette
	command      string   // re-records the cassette; "" when unknown
}

// diffEntry is one entry of MissError.Diff.
type diffEntry = struct{ Field, Recorded, Requested string }

// Unwrap returns ErrInteractionNotFound.
func (e *MissError) Unwrap() error { return ErrInteractionNotFound }

// RetryableError reports that the request is not worth retrying: replay
// answers it from the same recording, so sending it again misses again.
// HTTP clients that consult this optional interface (aws-sdk-go-v2's
// retryer asks for RetryableError() bool) make one attempt, not several
// with backoff between them.
func (*MissError) RetryableError() bool { return false }

// Change identifies how the request differs from its recording,
// whatever request it is (the hex blake3 of a description that holds no
// secret): for a request told against its nearest interaction, its
// method, URL and each differing part with its edit (for a string, the
// words that differ, whatever surrounds them), so that one change to the
// code that every request of a pipeline carries gives every request's
// miss the same Change, and a value that differs between runs another;
// for an API-version miss the cassette and the version change alone;
// for a credential lookup the service; for a request sent more often
// than recorded, the request. Two misses with equal Change are explained by the
// same change.
func (e *MissError) Change() string { return e.change }

// Error returns the miss as text: the request, then why it missed (the
// nearest interaction and the differing parts, the service a credential
// lookup asked, the API version, or the interactions already replayed),
// then the command that re-records the cassette, when one is known and
// recording again can help.
func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s %s (body blake3 %s)", ErrInteractionNotFound, e.Method, e.URL, e.body)
	advise := true
	switch {
	case e.Credentials != "":
		fmt.Fprintf(&b, "\n%s; recording again cannot fix it", e.Credentials)
		advise = false
	case e.Exhausted:
		fmt.Fprintf(&b, "\ncassette exhausted: open it per run: every one of the cassette's %d recorded interactions was already replayed by this Cassette, the last with this request at line %d: a Cassette serves one run, so open it per run (a fresh Open for each run), not once for many", e.interactions, e.Line)
		advise = false
	case e.Served > 0:
		fmt.Fprintf(&b, "\nall %d recorded interactions with this request were already replayed (the last at line %d): the code under test sent this request more often than when the cassette was recorded", e.Served, e.Line)
	case e.Nearest < 0:
		b.WriteString("\nthe cassette has no interactions")
	case e.APIVersion:
		fmt.Fprintf(&b, "\nrecorded interaction %d (line %d) differs from it only in the API version its SDK sends: %s; the SDK was upgraded since the cassette was recorded, and a new API version can change the answer, so the cassette needs recording again", e.Nearest, e.Line, e.VersionChange())
		if e.command != "" {
			fmt.Fprintf(&b, ": %s", e.command)
		}
		return b.String()
	case e.sameKey:
		h := e.Diff[0]
		fmt.Fprintf(&b, "\nrecorded interaction %d (line %d) has this method, URL and body, but the %s differs: recorded %s, requested %s; a header sent and recorded with different values changes what is asked, so it is a miss (a header the recording lacks is not)",
			e.Nearest, e.Line, h.Field, h.Recorded, h.Requested)
	default:
		fmt.Fprintf(&b, "\nnearest recorded interaction: %d (line %d): %s", e.Nearest, e.Line, e.nearest)
		writeDiff(&b, e.Diff)
	}
	if advise && e.command != "" {
		fmt.Fprintf(&b, "\nif the request change is intended, re-record with: %s", e.command)
	}
	return b.String()
}

// VersionChange says, for an APIVersion miss, what changed: each
// differing part with its recorded and requested value, such as
// `header Anthropic-Version "2023-06-01" != "2026-10-21"`.
func (e *MissError) VersionChange() string {
	parts := make([]string, len(e.Diff))
	for i, d := range e.Diff {
		parts[i] = fmt.Sprintf("%s %s != %s", d.Field, d.Recorded, d.Requested)
	}
	return strings.Join(parts, ", ")
}

// maxDiffShown bounds the differing parts a miss's message lists.
const maxDiffShown = 20

// writeDiff writes the differing parts of a request: method, URL and
// header each on a line, then the body's.
func writeDiff(b *strings.Builder, diff []diffEntry) {
	var body []string
	for _, d := range diff {
		if f, ok := strings.CutPrefix(d.Field, "body"); ok {
			if f = strings.TrimPrefix(f, " "); f == "" {
				f = "(body)"
			}
			body = append(body, fmt.Sprintf("%s: %s != %s", f, d.Recorded, d.Requested))
			continue
		}
		fmt.Fprintf(b, "\n  %s: recorded %s, requested %s", d.Field, d.Recorded, d.Requested)
	}
	if len(body) > maxDiffShown {
		body = append(body[:maxDiffShown:maxDiffShown], fmt.Sprintf("... and %d more differences", len(body)-maxDiffShown))
	}
	if len(body) > 0 {
		fmt.Fprintf(b, "\n  body (recorded vs requested):\n    %s", strings.Join(body, "\n    "))
	}
}

// miss explains why no recorded interaction serves cr. candidates are the
// interactions with cr's key, in file order; c.mu is held.
func (c *Cassette) miss(cr *canonRequest, candidates []int) error {
	key := c.cfg.APIKey
	e := &MissError{Method: cr.method, URL: maskSecrets(redactURL(cr.url), key), Cassette: c.path, Nearest: -1,
		body: cr.bodyDigest(), interactions: len(c.state), command: c.command}
	if u, err := url.Parse(cr.url); err == nil {
		e.Credentials = credentialEndpoint(u)
	}
	for _, i := range candidates {
		if headerConflict(c.p.canon[i].headers, cr.headers) < 0 {
			e.Served++
			e.Nearest, e.Line = i, c.p.lines[i]
		}
	}
	switch {
	case e.Credentials != "":
		e.Nearest, e.Line, e.Served = -1, 0, 0
		e.change = events.Sum([]byte("credentials\x00" + e.Credentials)).String()
	case e.Served > 0:
		e.Exhausted = c.usedUp()
		e.change = events.Sum(fmt.Appendf(nil, "served\x00%s\x00%s\x00%s\x00%s\x00%d\x00%t", e.Cassette, e.Method, e.URL, e.body, e.Served, e.Exhausted)).String()
	case len(candidates) > 0:
		i := candidates[0]
		e.Nearest, e.Line = i, c.p.lines[i]
		h := headerConflict(c.p.canon[i].headers, cr.headers)
		e.sameKey = true
		e.add(headerEntry(h, c.p.canon[i].headers[h], cr.headers[h]), "")
	default:
		if n := c.nearest(cr); n >= 0 {
			e.Nearest, e.Line = n, c.p.lines[n]
			rc := c.p.canon[n]
			e.nearest = fmt.Sprintf("%s %s (body blake3 %s)", rc.method, maskSecrets(redactURL(rc.url), key), rc.bodyDigest())
			c.diff(e, rc, cr)
		}
	}
	if e.change == "" {
		e.APIVersion = len(e.Diff) > 0 && !slices.ContainsFunc(e.Diff, func(d diffEntry) bool { return !versionOnly(d) })
		e.change = changeOf(e)
	}
	c.noteMiss(e)
	err := newErr(c.path, e.Line, "replay", e)
	if lerr := refreshRun.noteMiss(c.path, e); lerr != nil {
		return errors.Join(err, lerr)
	}
	return err
}

// changeOf is the Change of a miss told against its nearest interaction.
func changeOf(e *MissError) string {
	var b strings.Builder
	if e.APIVersion {
		fmt.Fprintf(&b, "api-version\x00%s", e.Cassette)
		for i, d := range e.Diff {
			if d.Field == "url" { // that its version changed, not which endpoint
				b.WriteString("\x00url")
				continue
			}
			fmt.Fprintf(&b, "\x00%s", e.edits[i])
		}
	} else {
		fmt.Fprintf(&b, "diff\x00%s\x00%s\x00%s", e.Cassette, e.Method, e.URL)
		for _, k := range e.edits {
			fmt.Fprintf(&b, "\x00%s", k)
		}
	}
	return events.Sum([]byte(b.String())).String()
}

// headerEntry is the Diff entry of matchHeaders[h], recorded rec and
// requested req.
func headerEntry(h int, rec, req string) diffEntry {
	return diffEntry{Field: "header " + matchHeaders[h], Recorded: fmt.Sprintf("%q", rec), Requested: fmt.Sprintf("%q", req)}
}

// add appends d to e.Diff, with its change in full (key; "" for d's
// values themselves).
func (e *MissError) add(d diffEntry, key string) {
	if key == "" {
		key = d.Field + "\x00" + d.Recorded + "\x00" + d.Requested
	}
	e.Diff = append(e.Diff, d)
	e.edits = append(e.edits, key)
}

// diff lists in e how cr differs from the recorded rc: method, URL, the
// first conflicting meaningful header, the body's edits (jsondiff.Edits,
// or one edit of the whole body when it is not JSON). Bodies are masked
// whole before any edit is cut from them: an excerpt can start inside a
// secret, where no rule would recognise it.
func (c *Cassette) diff(e *MissError, rc, cr *canonRequest) {
	key := c.cfg.APIKey
	if rc.method != cr.method {
		e.add(diffEntry{Field: "method", Recorded: rc.method, Requested: cr.method}, "")
	}
	if rc.url != cr.url {
		e.add(diffEntry{Field: "url", Recorded: maskSecrets(redactURL(rc.url), key), Requested: maskSecrets(redactURL(cr.url), key)}, "")
	}
	if h := headerConflict(rc.headers, cr.headers); h >= 0 {
		e.add(headerEntry(h, rc.headers[h], cr.headers[h]), "")
	}
	if !bytes.Equal(rc.body, cr.body) {
		recBody := []byte(maskSecrets(string(rc.body), key))
		reqBody := []byte(maskSecrets(string(cr.body), key))
		edits := jsondiff.Edits(recBody, reqBody)
		if edits == nil {
			edits = []jsondiff.Edit{jsondiff.StringEdit("", string(recBody), string(reqBody))}
		}
		for _, ed := range edits {
			f := "body"
			if ed.Path != "" {
				f += " " + ed.Path
			}
			e.add(diffEntry{Field: f, Recorded: ed.A, Requested: ed.B}, f+"\x00"+ed.Key)
		}
	}
}

// versionSegment is a URL path segment that names an API version.
var versionSegment = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]*)?$`)

// versionOnly reports whether d is a difference in the API version a
// request asks for: the Anthropic-Version header, or URLs that differ
// only in a version segment of the path or a beta query parameter.
func versionOnly(d diffEntry) bool {
	switch d.Field {
	case "header Anthropic-Version":
		return true
	case "url":
		return unversioned(d.Recorded) != "" && unversioned(d.Recorded) == unversioned(d.Requested)
	}
	return false
}

// unversioned is the URL raw with its path's version segments replaced
// by "v" and its beta query parameter removed; "" when raw does not
// parse.
func unversioned(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	segs := strings.Split(u.Path, "/")
	for i, s := range segs {
		if versionSegment.MatchString(s) {
			segs[i] = "v"
		}
	}
	u.Path, u.RawPath = strings.Join(segs, "/"), ""
	q := u.Query()
	q.Del("beta")
	u.RawQuery = q.Encode()
	return u.String()
}

// noteMiss counts e among the cassette's misses, for Close; c.mu is
// held.
func (c *Cassette) noteMiss(e *MissError) {
	if e.APIVersion {
		c.versionMisses++
		if c.versionChange == "" {
			c.versionChange = e.VersionChange()
		}
		return
	}
	c.otherMisses++
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
