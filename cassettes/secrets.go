package cassettes

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/cassettes/internal/secrets"
	"github.com/codegenie/codegenie/cassettes/internal/vcryaml"
	"github.com/codegenie/codegenie/events"
)

// credentialHeaders carry credentials: a cassette may hold them only
// masked (see isMasked).
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie", "Set-Cookie"}

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

// secretFinding locates a secret without revealing any of it.
type secretFinding struct {
	what string // what kind of secret, never its value
	line int    // 1-based line in the file
}

// headerRef is one header value of a parsed cassette, with its line.
type headerRef = vcryaml.Header

// scanCache holds the ruleset's verdict on a cassette's content by digest:
// the rules run once per content however often it is opened.
var scanCache struct {
	sync.Mutex
	m map[events.Digest]*secretFinding
}

const maxCachedScans = 256

// findSecret returns the first credential in the cassette p, or nil: the
// recording key anywhere in the file (when at least 8 bytes long), a
// credential header holding anything but a placeholder, and, when deep,
// anything the secrets ruleset finds in the file or in a header rendered
// as "Name: value".
func findSecret(p *parsed, apiKey string, deep bool) *secretFinding {
	if len(apiKey) >= 8 {
		if i := bytes.Index(p.raw, []byte(apiKey)); i >= 0 {
			return &secretFinding{what: "the API key used for recording", line: lineOfOffset(p.raw, i)}
		}
	}
	if !deep {
		return credentialHeader(p)
	}
	scanCache.Lock()
	f, ok := scanCache.m[p.digest]
	scanCache.Unlock()
	if ok {
		return f
	}
	f = scanParsed(p)
	scanCache.Lock()
	if scanCache.m == nil || len(scanCache.m) >= maxCachedScans {
		scanCache.m = map[events.Digest]*secretFinding{}
	}
	scanCache.m[p.digest] = f
	scanCache.Unlock()
	return f
}

// credentialHeader returns the first credential header holding anything
// but a placeholder.
func credentialHeader(p *parsed) *secretFinding {
	for _, h := range p.headers {
		if slices.Contains(credentialHeaders, http.CanonicalHeaderKey(h.Name)) && !isMasked(h.Value) {
			return &secretFinding{what: fmt.Sprintf("a credential in the %s header", http.CanonicalHeaderKey(h.Name)), line: h.Line}
		}
	}
	return nil
}

func scanParsed(p *parsed) *secretFinding {
	best := credentialHeader(p)
	keep := func(f *secretFinding) {
		if best == nil || f.line < best.line {
			best = f
		}
	}
	for _, h := range p.headers {
		if fs := secrets.Scan(h.Name + ": " + h.Value + "\n"); len(fs) > 0 {
			keep(&secretFinding{what: fs[0].Description + " (rule " + fs[0].Rule + ") in the " + http.CanonicalHeaderKey(h.Name) + " header", line: h.Line})
		}
	}
	if fs := secrets.Scan(string(p.raw)); len(fs) > 0 {
		keep(&secretFinding{what: fs[0].Description + " (rule " + fs[0].Rule + ")", line: lineOfOffset(p.raw, fs[0].Start)})
	}
	return best
}

// maskSecrets replaces every secret the ruleset finds in s, and apiKey
// wherever it occurs, with "REDACTED": for text that reaches a message.
func maskSecrets(s, apiKey string) string { return secrets.Mask(s, redacted, apiKey) }

// secretError reports a credential in the cassette p as an ErrSecret
// naming the file and line, never the value.
func secretError(p *parsed, op, apiKey, refresh string, deep bool) error {
	f := findSecret(p, apiKey, deep)
	if f == nil {
		return nil
	}
	return newErr(p.path, f.line, op, detailf(ErrSecret,
		"%v: the cassette holds %s at line %d (the value is not shown); a cassette must never hold credentials: treat it as leaked (revoke it), then re-record the cassette, which redacts credentials: %s",
		ErrSecret, f.what, f.line, refresh))
}
