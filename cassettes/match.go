package cassettes

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"lukechampine.com/blake3"
)

// matchHeaders are the request headers that change the meaning of an LLM
// request and are therefore part of the key. Every other request header is
// ignored (in particular User-Agent, X-Stainless-*, retry counts, timeouts,
// idempotency keys and credentials).
var matchHeaders = []string{"Anthropic-Version", "Anthropic-Beta", "Content-Type"}

// sensitiveQuery are query parameters whose values are credentials. They
// are replaced by redacted in the canonical URL and in saved cassettes, so a
// key in a URL matches whatever key the replaying caller sends.
var sensitiveQuery = []string{"key", "api_key", "apikey", "access_token", "token", "sig", "signature"}

const redacted = "REDACTED"

// key identifies a request for matching: blake3-256 over the canonical
// request (see doc.go).
type key [32]byte

// canonRequest is a request reduced to what matching looks at.
type canonRequest struct {
	method  string
	url     string // canonical URL
	headers []string
	body    []byte // canonical JSON, or the raw bytes
	isJSON  bool
}

func (c *canonRequest) key() key {
	h := blake3.New(32, nil)
	w := func(s string) {
		var n [8]byte
		l := uint64(len(s))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	w(c.method)
	w(c.url)
	for _, v := range c.headers {
		w(v)
	}
	if c.isJSON {
		w("json")
	} else {
		w("bytes")
	}
	w(string(c.body))
	var k key
	h.Sum(k[:0])
	return k
}

// bodyDigest is the hex blake3-256 of the canonical body, shown in misses.
func (c *canonRequest) bodyDigest() string { return events.Sum(c.body).String() }

// canonicalHead canonicalizes everything but the body.
func canonicalHead(method, rawURL string, h http.Header) (*canonRequest, error) {
	u, err := canonicalURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := &canonRequest{method: strings.ToUpper(method), url: u, headers: make([]string, 0, len(matchHeaders))}
	for _, name := range matchHeaders {
		c.headers = append(c.headers, name+"="+canonicalHeader(name, h.Values(name)))
	}
	return c, nil
}

// sameHead reports whether a and b agree on method, URL and headers.
func sameHead(a, b *canonRequest) bool {
	return a.method == b.method && a.url == b.url && slices.Equal(a.headers, b.headers)
}

// setBody canonicalizes body into c.
func (c *canonRequest) setBody(body []byte) {
	if cb, err := events.CanonicalizeJSON(body); err == nil && len(bytes.TrimSpace(body)) > 0 {
		c.body, c.isJSON = cb, true
	} else {
		c.body, c.isJSON = body, false
	}
}

func canonicalize(method, rawURL string, h http.Header, body []byte) (*canonRequest, error) {
	c, err := canonicalHead(method, rawURL, h)
	if err != nil {
		return nil, err
	}
	c.setBody(body)
	return c, nil
}

func canonicalHeader(name string, values []string) string {
	switch name {
	case "Anthropic-Beta":
		var parts []string
		for _, v := range values {
			for p := range strings.SplitSeq(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					parts = append(parts, p)
				}
			}
		}
		slices.Sort(parts)
		return strings.Join(slices.Compact(parts), ",")
	case "Content-Type":
		v := strings.TrimSpace(strings.Join(values, ","))
		if v == "" {
			return ""
		}
		mt, params, err := mime.ParseMediaType(v)
		if err != nil {
			return strings.ToLower(v)
		}
		if cs, ok := params["charset"]; ok {
			params["charset"] = strings.ToLower(cs)
		}
		return mime.FormatMediaType(mt, params)
	default:
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = strings.TrimSpace(v)
		}
		return strings.Join(out, ",")
	}
}

// canonicalURL lowercases scheme and host, drops default ports, user info
// and fragment, sorts the query by key and redacts credential parameters.
func canonicalURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	b.WriteString(path)
	if u.RawQuery != "" {
		q := u.Query()
		redactQuery(q)
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String(), nil
}

func redactQuery(q url.Values) {
	for k, vs := range q {
		if slices.Contains(sensitiveQuery, strings.ToLower(k)) {
			for i := range vs {
				vs[i] = redacted
			}
		}
	}
}

// redactURL is the URL as saved and as shown in errors: user info dropped,
// credential query parameters redacted, otherwise unchanged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		before := q.Encode()
		redactQuery(q)
		if after := q.Encode(); after != before {
			u.RawQuery = after
		}
	}
	return u.String()
}
