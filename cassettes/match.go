package cassettes

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/canonjson"
)

// matchHeaders are the request headers that change the meaning of an LLM
// request. A request agrees with a recorded one on each of them unless
// both carry it with different canonical values (see doc.go). Every other
// request header is ignored.
var matchHeaders = []string{"Anthropic-Version", "Anthropic-Beta", "Content-Type", "Openai-Beta"}

// contentTypeHeader is the index of Content-Type in matchHeaders.
const contentTypeHeader = 2

// mergePatch is the media type of a JSON merge patch (RFC 7396), whose
// nulls remove members: the one JSON body whose null members matching
// keeps.
const mergePatch = "application/merge-patch+json"

// sensitiveQuery are query parameters whose values are credentials. They
// are replaced by redacted in the canonical URL and in saved cassettes, so a
// key in a URL matches whatever key the replaying caller sends.
var sensitiveQuery = []string{"key", "api_key", "apikey", "access_token", "token", "sig", "signature"}

const redacted = "REDACTED"

// key identifies a request for matching: blake3-256 over the method, the
// canonical URL and the canonical body (see doc.go).
type key [32]byte

// canonRequest is a request reduced to what matching looks at.
type canonRequest struct {
	method  string
	url     string   // canonical URL
	headers []string // canonical value of each matchHeaders entry; "" when absent
	body    []byte   // canonical JSON, canonical parts, or the bytes
	kind    string   // how body was made: see canonicalBody

	// What canonicalBody reads of the headers: the Content-Encoding
	// codings and a multipart body's boundary, and the two as one string
	// (the same for two requests whose bodies are read alike).
	codings  []string
	boundary string
	form     string
}

func (c *canonRequest) key() key { return c.keyWith(newHasher()) }

// keyWith is key computed with h, which it resets first.
func (c *canonRequest) keyWith(h *hasher) key {
	h.reset()
	for _, s := range []string{c.method, c.url, c.kind} {
		h.write(binary.LittleEndian.AppendUint64(h.chunk[:0], uint64(len(s))))
		h.writeString(s)
	}
	h.write(binary.LittleEndian.AppendUint64(h.chunk[:0], uint64(len(c.body))))
	h.write(c.body)
	return key(h.sum())
}

// bodyDigest is the hex blake3-256 of the canonical body, shown in misses.
func (c *canonRequest) bodyDigest() string { return events.Sum(c.body).String() }

// headerConflict returns the index in matchHeaders of the first header
// both recorded and requested carry with different values, or -1.
func headerConflict(recorded, requested []string) int {
	for i := range recorded {
		if recorded[i] != "" && requested[i] != "" && recorded[i] != requested[i] {
			return i
		}
	}
	return -1
}

// urlKey is what canonicalURL reads of a URL, as a map key.
type urlKey struct{ scheme, host, path, rawPath, rawQuery string }

func keyOf(u *url.URL) urlKey { return urlKey{u.Scheme, u.Host, u.Path, u.RawPath, u.RawQuery} }

// canonicalHead canonicalizes method, URL and headers. known maps URLs
// already canonicalized (nil for none).
func canonicalHead(method string, u *url.URL, h http.Header, known map[urlKey]string) *canonRequest {
	cu, ok := known[keyOf(u)]
	if !ok {
		cu = canonicalURL(u)
	}
	if method != "GET" && method != "POST" {
		method = strings.ToUpper(method)
	}
	c := &canonRequest{method: method, url: cu, headers: make([]string, len(matchHeaders))}
	for i, name := range matchHeaders {
		c.headers[i] = canonicalHeader(name, h[name])
	}
	c.codings = contentCodings(h)
	if ct := h["Content-Type"]; len(ct) == 1 && len(ct[0]) > 10 && strings.EqualFold(ct[0][:10], "multipart/") {
		if _, params, err := mime.ParseMediaType(ct[0]); err == nil {
			c.boundary = params["boundary"]
		}
	}
	if len(c.codings) > 0 || c.boundary != "" {
		c.form = strings.Join(c.codings, ",") + "\x00" + c.boundary
	}
	return c
}

// setBody canonicalizes body into c; c.body may share body's bytes.
func (c *canonRequest) setBody(body []byte) {
	budget := int64(maxDecodedBytes)
	c.body, c.kind, _ = c.canonicalBody(body, &budget)
}

// setBodyString is setBody for a body held in a string; scratch is
// reused from call to call, and what decoding makes is charged to budget,
// shared by the bodies of one cassette.
func (c *canonRequest) setBodyString(body string, scratch *[]byte, budget *int64) {
	*scratch = append((*scratch)[:0], body...)
	var shared bool
	c.body, c.kind, shared = c.canonicalBody(*scratch, budget)
	if shared {
		c.body = []byte(body)
	}
}

// Body kinds, the third field of a key.
const (
	kindJSON        = "json"        // canonical JSON
	kindMultipart   = "multipart"   // canonical parts (canonicalMultipart)
	kindBytes       = "bytes"       // the bytes, decoded from their Content-Encoding
	kindUndecodable = "undecodable" // bytes whose Content-Encoding could not be undone
)

// canonicalBody returns what matching compares of a body: decoded from
// its Content-Encoding (gzip, deflate: as the secret checks decode, what
// it makes charged to budget), then a multipart body's canonical parts,
// or canonical JSON without null members (with them, for a merge patch),
// or else the bytes; with its kind, and whether it
// shares body's bytes.
func (c *canonRequest) canonicalBody(body []byte, budget *int64) ([]byte, string, bool) {
	shared := true
	if len(c.codings) > 0 {
		d, err := decodeBody(string(body), c.codings, budget)
		if err != nil {
			return body, kindUndecodable, true
		}
		body, shared = []byte(d), false
	}
	if c.boundary != "" {
		if mp, ok := canonicalMultipart(body, c.boundary); ok {
			return mp, kindMultipart, false
		}
	}
	if len(body) > 0 {
		canonical := canonjson.AppendOmitNull
		if c.headers[contentTypeHeader] == mergePatch {
			canonical = canonjson.Append // null removes a member
		}
		if cb, err := canonical(make([]byte, 0, len(body)), body); err == nil {
			return cb, kindJSON, false
		}
	}
	return body, kindBytes, shared
}

// maxParts bounds the parts of a multipart body matching reads part by
// part; one with more is compared as bytes.
const maxParts = 1000

// canonicalMultipart returns the canonical JSON of a multipart body's
// parts, in order, each its headers (canonical names; Content-Type and
// Content-Disposition as mime.FormatMediaType writes them, other values
// trimmed) and its content ("text" when UTF-8, else "base64"): what the
// body means whatever its boundary. Preamble and epilogue, which mean
// nothing, are left out. ok is false when body is not well-formed
// multipart with that boundary.
func canonicalMultipart(body []byte, boundary string) (_ []byte, ok bool) {
	type part struct {
		Headers map[string][]string `json:"headers"`
		Text    *string             `json:"text,omitempty"`
		Base64  *string             `json:"base64,omitempty"`
	}
	var parts []part
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil || len(parts) == maxParts {
			return nil, false
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, false
		}
		h := make(map[string][]string, len(p.Header))
		for name, vs := range p.Header {
			out := make([]string, len(vs))
			for i, v := range vs {
				out[i] = strings.TrimSpace(v)
				if name == "Content-Type" || name == "Content-Disposition" {
					if mt, params, err := mime.ParseMediaType(v); err == nil {
						out[i] = mime.FormatMediaType(mt, params)
					}
				}
			}
			h[name] = out
		}
		pt := part{Headers: h}
		if s := string(content); utf8.ValidString(s) {
			pt.Text = &s
		} else {
			b := base64.StdEncoding.EncodeToString(content)
			pt.Base64 = &b
		}
		parts = append(parts, pt)
	}
	out, err := events.Canonical(map[string][]part{"multipart": parts})
	return out, err == nil
}

// canonicalHeader is the value a header is compared by: Anthropic-Beta and
// OpenAI-Beta as a sorted set of comma-separated features, Content-Type as
// a media type without the parameters that do not change its meaning
// (charset on JSON, which is always UTF-8), anything else trimmed.
func canonicalHeader(name string, values []string) string {
	switch name {
	case "Anthropic-Beta", "Openai-Beta":
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
		if v == "" || v == "application/json" {
			return v
		}
		mt, params, err := mime.ParseMediaType(v)
		if err != nil {
			return strings.ToLower(v)
		}
		if strings.HasPrefix(mt, "multipart/") {
			delete(params, "boundary") // random per request
		}
		if cs, ok := params["charset"]; ok {
			params["charset"] = strings.ToLower(cs)
			if isJSONMedia(mt) && strings.EqualFold(cs, "utf-8") {
				delete(params, "charset")
			}
		}
		return mime.FormatMediaType(mt, params)
	default:
		if len(values) <= 1 {
			return strings.TrimSpace(strings.Join(values, ""))
		}
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = strings.TrimSpace(v)
		}
		return strings.Join(out, ",")
	}
}

func isJSONMedia(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// canonicalURL lowercases scheme and host, drops default ports, user info
// and fragment, sorts the query by key and redacts credential parameters.
func canonicalURL(u *url.URL) string {
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
	b.Grow(len(scheme) + 3 + len(host) + len(path) + len(u.RawQuery) + 1)
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
	return b.String()
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
