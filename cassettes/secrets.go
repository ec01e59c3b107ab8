package cassettes

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/codegenie/codegenie/cassettes/internal/secrets"
	"github.com/codegenie/codegenie/events"
)

// credentialHeaders carry credentials: a cassette may hold them only
// masked (see isMasked).
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie", "Set-Cookie", "X-Goog-Api-Key", "X-Amz-Security-Token"}

// isMasked reports whether a credential header's value is a placeholder
// some recorder left instead of the credential: it has no letter or digit,
// or it says redacted, filtered, removed or masked.
func isMasked(v string) bool {
	l := strings.ToLower(v)
	for _, w := range []string{"redacted", "filtered", "removed", "masked"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return !strings.ContainsFunc(v, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	})
}

// secretFinding locates a secret without revealing any of it, or, when
// unchecked, content the checks could not read.
type secretFinding struct {
	what      string // what kind of secret, never its value; or why unchecked
	line      int    // 1-based line in the file
	unchecked bool   // content past the decoding budget, which may hold anything
}

// scanCache holds the ruleset's verdict on a cassette by the blake3 of its
// text (which decides its meaning too): the rules run once per file
// content however often it is opened.
var scanCache struct {
	sync.Mutex
	m map[events.Digest]*secretFinding
}

const maxCachedScans = 256

// findSecret returns the first credential in the cassette p, or nil: the
// recording key (when at least 8 bytes long) in the file's text or in what
// it means (see fields), a credential header holding anything but a
// placeholder, and, when deep, anything the secrets ruleset finds in the
// text or in what it means.
func findSecret(p *parsed, apiKey string, deep bool) *secretFinding {
	if f := p.checked.key(p, apiKey); f != nil {
		return f
	}
	if !deep {
		return p.checked.credential(p)
	}
	scanCache.Lock()
	f, ok := scanCache.m[p.sum]
	scanCache.Unlock()
	if ok {
		return f
	}
	f = scanParsed(p)
	scanCache.Lock()
	if scanCache.m == nil || len(scanCache.m) >= maxCachedScans {
		scanCache.m = map[events.Digest]*secretFinding{}
	}
	scanCache.m[p.sum] = f
	scanCache.Unlock()
	return f
}

// checked holds the findings of the checks that run at every Open of a
// cassette, so each runs once per content (and key) in a process.
type checked struct {
	mu       sync.Mutex
	credDone bool
	cred     *secretFinding
	keys     map[events.Digest]*secretFinding // by the blake3 of the key
}

// credential is credentialHeader(p), made once.
func (c *checked) credential(p *parsed) *secretFinding {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.credDone {
		c.cred, c.credDone = credentialHeader(p), true
	}
	return c.cred
}

// key is keyFinding(p, apiKey), made once per key.
func (c *checked) key(p *parsed, apiKey string) *secretFinding {
	if len(apiKey) < 8 {
		return nil
	}
	k := events.Sum([]byte(apiKey))
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.keys[k]
	if !ok {
		if c.keys == nil || len(c.keys) >= maxCachedScans {
			c.keys = map[events.Digest]*secretFinding{}
		}
		f = keyFinding(p, apiKey)
		c.keys[k] = f
	}
	return f
}

// keyFinding locates apiKey in p's text, else in what p means.
func keyFinding(p *parsed, apiKey string) *secretFinding {
	const what = "the API key used for recording"
	if len(apiKey) < 8 {
		return nil
	}
	if i := bytes.Index(p.raw, []byte(apiKey)); i >= 0 {
		return &secretFinding{what: what, line: lineOfOffset(p.raw, i)}
	}
	budget := p.embeddedBudget()
	for i := range p.c.Interactions {
		var hit *field
		// Past the budget, the rest is not searched: the full scan
		// refuses such a cassette.
		_, _ = p.meaning(i, &budget, func(f field) bool {
			if strings.Contains(f.value, apiKey) {
				hit = &f
			}
			return hit == nil
		})
		if hit != nil {
			return &secretFinding{what: what + meant, line: p.lineOf(i, hit.src)}
		}
	}
	return nil
}

// meant qualifies a secret found in what a cassette means but not in its
// text.
const meant = " (in what the cassette decodes to: an alias, a merge key, an escape, base64 (of a !!binary scalar, an event-stream bytes member or a multipart part) or a compressed body)"

// credentialHeader returns the first credential header holding anything
// but a placeholder, as yaml.v3 decodes the headers (aliases and merge
// keys resolved): by interaction, then request headers, request trailer,
// response headers and response trailer, then name.
func credentialHeader(p *parsed) *secretFinding {
	for i, in := range p.c.Interactions {
		for _, h := range []http.Header{in.Request.Headers, in.Request.Trailer, in.Response.Headers, in.Response.Trailer} {
			best, value := "", ""
			for name, vs := range h {
				canon := http.CanonicalHeaderKey(name)
				if best != "" && name >= best || !slices.Contains(credentialHeaders, canon) {
					continue
				}
				for _, v := range vs {
					if !isMasked(v) {
						best, value = name, v
						break
					}
				}
			}
			if best != "" {
				return &secretFinding{what: fmt.Sprintf("a credential in the %s header", http.CanonicalHeaderKey(best)), line: p.lineOf(i, value)}
			}
		}
	}
	return nil
}

// scanParsed runs the secrets ruleset over p's text and over what p
// means, and checks its credential headers; it returns the finding on
// the earliest line.
func scanParsed(p *parsed) *secretFinding {
	best := credentialHeader(p)
	keep := func(f *secretFinding) {
		if best == nil || f.line < best.line {
			best = f
		}
	}
	// p.raw is never written after it is read, so the string may share it.
	if fs := secrets.Scan(unsafe.String(unsafe.SliceData(p.raw), len(p.raw))); len(fs) > 0 {
		keep(&secretFinding{what: fs[0].Description + " (rule " + fs[0].Rule + ")", line: lineOfOffset(p.raw, fs[0].Start)})
	}
	if f := scanMeaning(p); f != nil {
		keep(f)
	}
	return best
}

// scanChunk is about how much of a cassette's meaning the ruleset reads at
// once: what it means is scanned interaction by interaction, in chunks of
// whole interactions.
const scanChunk = 1 << 20

// scanMeaning runs the secrets ruleset over what p means and returns its
// first finding, or nil.
func scanMeaning(p *parsed) *secretFinding {
	var b strings.Builder
	var starts []int // of each interaction of the chunk in b
	budget := p.embeddedBudget()
	for i, first := 0, 0; i < len(p.c.Interactions); i++ {
		starts = append(starts, b.Len())
		if body, err := p.meaning(i, &budget, func(f field) bool {
			f.writeTo(&b)
			return true
		}); err != nil {
			return &secretFinding{what: err.Error(), line: p.lineOf(i, body), unchecked: true}
		}
		if b.Len() < scanChunk && i+1 < len(p.c.Interactions) {
			continue
		}
		text := b.String()
		if fs := secrets.Scan(text); len(fs) > 0 {
			k, ok := slices.BinarySearch(starts, fs[0].Start)
			if !ok {
				k--
			}
			src, off := "", starts[k]
			again := int64(maxDecodedBytes) // one interaction's, decoded again
			_, _ = p.meaning(first+k, &again, func(f field) bool {
				src, off = f.src, off+f.len()
				return off <= fs[0].Start
			})
			what := fs[0].Description + " (rule " + fs[0].Rule + ")"
			if !bytes.Contains(p.raw, []byte(text[fs[0].Start:fs[0].End])) {
				what += meant
			}
			return &secretFinding{what: what, line: p.lineOf(first+k, src)}
		}
		b.Reset()
		starts, first = starts[:0], i+1
	}
	return nil
}

// maskSecrets replaces every secret the ruleset finds in s, and apiKey
// wherever it occurs, with "REDACTED": for text that reaches a message.
func maskSecrets(s, apiKey string) string { return secrets.Mask(s, redacted, apiKey) }

// secretError reports a credential in the cassette p as an errSecret
// naming the file and line, never the value.
func secretError(p *parsed, op, apiKey, refresh string, deep bool) error {
	f := findSecret(p, apiKey, deep)
	if f == nil {
		return nil
	}
	if f.unchecked {
		if refresh == "" {
			refresh = "a new recording"
		}
		return newErr(p.path, f.line, op, detailf(errInvalidCassette,
			"%v: line %d holds %s; replace it with a new recording: %s", errInvalidCassette, f.line, f.what, refresh))
	}
	return newErr(p.path, f.line, op, detailf(errSecret,
		"%v: the cassette holds %s at line %d (the value is not shown); a cassette must never hold credentials: treat it as leaked (revoke it), then re-record the cassette, which redacts credentials: %s",
		errSecret, f.what, f.line, refresh))
}

// lineOfOffset is the 1-based line holding byte off of raw.
func lineOfOffset(raw []byte, off int) int {
	off = min(max(off, 0), len(raw))
	return bytes.Count(raw[:off], []byte("\n")) + 1
}
