package cassettes

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// A cassette means what yaml.v3 decodes from it (aliases and merge keys
// resolved, !!binary decoded) and what a client reads from that: bodies
// decoded from the Content-Encoding the recorder kept, URL query values
// unescaped. The secret checks read this meaning as well as the text.

// maxDecodedBytes bounds what the bodies of one cassette decode to from
// their Content-Encoding, together.
const maxDecodedBytes = 64 << 20

// bodyAt returns body b of interaction i: b = 2i is the request's, 2i+1
// the response's, with its headers.
func bodyAt(in *cassette.Interaction, b int) (string, http.Header) {
	if b%2 == 0 {
		return in.Request.Body, in.Request.Headers
	}
	return in.Response.Body, in.Response.Headers
}

// decodeBodies decodes every body whose headers name a Content-Encoding
// into p.decoded. On failure it returns the body's number (see bodyAt) and
// why.
func (p *parsed) decodeBodies() (int, error) {
	budget := int64(maxDecodedBytes)
	for i, in := range p.c.Interactions {
		for b := 2 * i; b < 2*i+2; b++ {
			body, h := bodyAt(in, b)
			codings := contentCodings(h)
			if len(codings) == 0 {
				continue
			}
			out, err := decodeBody(body, codings, &budget)
			if err != nil {
				side := "request"
				if b%2 == 1 {
					side = "response"
				}
				return b, fmt.Errorf("the %s body cannot be decoded from its Content-Encoding %q, so it cannot be checked for secrets: %w",
					side, strings.Join(codings, ", "), err)
			}
			if p.decoded == nil {
				p.decoded = map[int]string{}
			}
			p.decoded[b] = out
		}
	}
	return 0, nil
}

// contentCodings lists the codings of h's Content-Encoding in the order
// they were applied, without identity; nil for none.
func contentCodings(h http.Header) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if !strings.EqualFold(name, "Content-Encoding") {
			continue
		}
		for _, v := range h[name] {
			for c := range strings.SplitSeq(v, ",") {
				if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// decodeBody undoes codings (applied in order) on body, charging what it
// makes to budget.
func decodeBody(body string, codings []string, budget *int64) (string, error) {
	data := []byte(body)
	for i := len(codings) - 1; i >= 0; i-- {
		var r io.Reader
		var err error
		switch codings[i] {
		case "gzip", "x-gzip":
			r, err = gzip.NewReader(bytes.NewReader(data))
		case "deflate":
			r, err = zlib.NewReader(bytes.NewReader(data))
			if err != nil { // some servers send raw deflate
				r, err = flate.NewReader(bytes.NewReader(data)), nil
			}
		default:
			return "", fmt.Errorf("coding %q is not one this package decodes (gzip, deflate); record without asking for it (Accept-Encoding)", codings[i])
		}
		if err != nil {
			return "", err
		}
		out, err := io.ReadAll(io.LimitReader(r, *budget+1))
		if err != nil {
			return "", err
		}
		if int64(len(out)) > *budget {
			return "", fmt.Errorf("the bodies decode to more than %d bytes", maxDecodedBytes)
		}
		*budget -= int64(len(out))
		data = out
	}
	return string(data), nil
}

// A field is one string of a cassette's meaning, as the secret checks
// read it: name ("" for a body) and value, the string yaml.v3 decoded it
// from (src) and the interaction it belongs to.
type field struct {
	i           int
	name, value string
	src         string
}

// writeTo writes the field as the secret ruleset reads it: a header as
// "Name: value", anything else as its value; one line or more, ended by
// a newline.
func (f field) writeTo(b *strings.Builder) {
	if f.name != "" {
		b.WriteString(f.name)
		b.WriteString(": ")
	}
	b.WriteString(f.value)
	b.WriteByte('\n')
}

// len is how many bytes writeTo writes.
func (f field) len() int {
	if f.name != "" {
		return len(f.name) + 2 + len(f.value) + 1
	}
	return len(f.value) + 1
}

// fields calls yield with every string of interaction i's meaning: the
// request's URL and its query values unescaped ("?name=value"), method,
// host, remote address, request URI, proto, form, headers, trailer, body
// (and the body decoded from its Content-Encoding), then the response's
// status, proto, headers, trailer and body (and decoded body). It stops
// when yield returns false and reports whether it did not.
func (p *parsed) fields(i int, yield func(field) bool) bool {
	in := p.c.Interactions[i]
	r, s := &in.Request, &in.Response
	str := func(name, v string) bool { return v == "" || yield(field{i: i, name: name, value: v, src: v}) }
	if !str("", r.URL) {
		return false
	}
	if u, err := url.Parse(r.URL); err == nil {
		if pw, ok := u.User.Password(); ok && !yield(field{i: i, value: pw, src: r.URL}) {
			return false
		}
		q := u.Query()
		for _, k := range sortedKeys(q) {
			for _, v := range q[k] {
				if !yield(field{i: i, value: "?" + k + "=" + v, src: r.URL}) {
					return false
				}
			}
		}
	}
	for _, v := range []string{r.Method, r.Host, r.RemoteAddr, r.RequestURI, r.Proto, s.Status, s.Proto} {
		if !str("", v) {
			return false
		}
	}
	for _, h := range []map[string][]string{r.Form, r.Headers, r.Trailer, s.Headers, s.Trailer} {
		for _, name := range sortedKeys(h) {
			for _, v := range h[name] {
				if !str(name, v) {
					return false
				}
			}
		}
	}
	for b := 2 * i; b < 2*i+2; b++ {
		body, _ := bodyAt(in, b)
		if !str("", body) {
			return false
		}
		if d, ok := p.decoded[b]; ok && !yield(field{i: i, value: d, src: body}) {
			return false
		}
	}
	return true
}

// sortedKeys returns m's keys in order.
func sortedKeys[M ~map[string][]string](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lineOf returns the line of interaction i's text where the string src
// is written (through aliases, as the base64 of a !!binary scalar), or
// the interaction's line when it cannot tell. It parses the whole text
// again, or, past maxTreeBytes, the interaction's own lines.
func (p *parsed) lineOf(i int, src string) int {
	item, shift := p.itemNode(i)
	budget := maxLineSearch
	var find func(n *yaml.Node) int
	find = func(n *yaml.Node) int {
		if budget--; budget < 0 || n == nil {
			return 0
		}
		switch n.Kind {
		case yaml.AliasNode:
			return find(n.Alias)
		case yaml.ScalarNode:
			if n.Value == src || n.Tag == "!!binary" && binaryIs(n.Value, src) {
				return n.Line
			}
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	if l := find(item); l > 0 {
		return l + shift
	}
	return p.lines[i]
}

// itemNode parses interaction i's node again, with the number of lines
// its node's lines are off by; nil when that fails.
func (p *parsed) itemNode(i int) (*yaml.Node, int) {
	var doc yaml.Node
	if len(p.raw) <= maxTreeBytes {
		if yaml.Unmarshal(p.raw, &doc) != nil || len(doc.Content) == 0 {
			return nil, 0
		}
		for _, n := range mappingValues(resolve(doc.Content[0]), "interactions") {
			if n = resolve(n); n != nil && i < len(n.Content) {
				return n.Content[i], 0
			}
		}
		return nil, 0
	}
	from, to := lineStart(p.raw, p.lines[i]), len(p.raw)
	if i+1 < len(p.lines) {
		to = lineStart(p.raw, p.lines[i+1])
	}
	if yaml.Unmarshal(p.raw[from:to], &doc) != nil || len(doc.Content) == 0 ||
		doc.Content[0].Kind != yaml.SequenceNode || len(doc.Content[0].Content) != 1 {
		return nil, 0
	}
	return doc.Content[0].Content[0], p.lines[i] - 1
}

// lineStart is the offset of 1-based line n of raw (len(raw) past its end).
func lineStart(raw []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		j := bytes.IndexByte(raw[off:], '\n')
		if j < 0 {
			return len(raw)
		}
		off += j + 1
	}
	return off
}

// maxLineSearch bounds the nodes lineOf visits.
const maxLineSearch = 1 << 20

// binaryIs reports whether the base64 text b64 (as yaml.v3 reads a
// !!binary scalar) decodes to s.
func binaryIs(b64, s string) bool {
	d, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(b64), ""))
	return err == nil && string(d) == s
}

// mappingValues returns the values of the given keys of mapping node n, in
// the order of keys, skipping absent ones.
func mappingValues(n *yaml.Node, keys ...string) []*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []*yaml.Node
	for _, k := range keys {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				out = append(out, n.Content[i+1])
			}
		}
	}
	return out
}
