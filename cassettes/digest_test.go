package cassettes

import (
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"pgregory.net/rapid"
)

// referenceDigest is cassette_id computed as doc.go words it: the blake3
// of events.Canonical of the projection. digestOf must agree with it.
func referenceDigest(t require.TestingT, c *cassette.Cassette) events.Digest {
	type request struct {
		cassette.Request
		BodyDigest events.Digest
	}
	type response struct {
		cassette.Response
		BodyDigest events.Digest
	}
	type interaction struct {
		ID       int
		Request  request
		Response response
	}
	d := struct {
		Version      int
		Interactions []interaction
	}{Version: c.Version, Interactions: []interaction{}}
	for _, in := range c.Interactions {
		req, resp := in.Request, in.Response
		req.Body, resp.Body = "", ""
		d.Interactions = append(d.Interactions, interaction{
			ID:       in.ID,
			Request:  request{Request: req, BodyDigest: events.Sum([]byte(in.Request.Body))},
			Response: response{Response: resp, BodyDigest: events.Sum([]byte(in.Response.Body))},
		})
	}
	b, err := events.Canonical(d)
	require.NoError(t, err)
	return events.Sum(b)
}

// genAnyString draws strings JSON encodes in every way: escapes, controls,
// U+2028, invalid UTF-8, and keys that decode alike.
func genAnyString(t *rapid.T, label string) string {
	parts := rapid.SliceOfN(rapid.SampledFrom([]string{
		"a", "Z", " ", "\"", "\\", "/", "<", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\xfe", "\xc3", "\xed\xa0\x80",
	}), 0, 8).Draw(t, label)
	return strings.Join(parts, "")
}

func genAnyMap(t *rapid.T, label string) map[string][]string {
	switch rapid.IntRange(0, 3).Draw(t, label+" kind") {
	case 0:
		return nil
	case 1:
		return map[string][]string{}
	}
	m := map[string][]string{}
	for range rapid.IntRange(1, 4).Draw(t, label+" size") {
		var vs []string
		if rapid.Bool().Draw(t, label+" has values") {
			vs = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return genAnyString(t, "value") }), 0, 2).Draw(t, label+" values")
		}
		m[genAnyString(t, label+" key")] = vs
	}
	return m
}

func TestDigestMatchesCanonicalEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ints := rapid.SampledFrom([]int64{0, 1, -1, 200, 1 << 53, math.MaxInt64, math.MinInt64, 999999999999999999})
		c := cassette.New("")
		c.Version = rapid.IntRange(0, 3).Draw(t, "version")
		for range rapid.IntRange(0, 3).Draw(t, "interactions") {
			var te []string
			if rapid.Bool().Draw(t, "has transfer encoding") {
				te = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return genAnyString(t, "te") }), 0, 2).Draw(t, "transfer encoding")
			}
			c.Interactions = append(c.Interactions, &cassette.Interaction{
				ID: int(ints.Draw(t, "id")),
				Request: cassette.Request{
					Proto: genAnyString(t, "proto"), ProtoMajor: int(ints.Draw(t, "major")), ProtoMinor: 1,
					ContentLength: ints.Draw(t, "request length"), TransferEncoding: te,
					Trailer: http.Header(genAnyMap(t, "request trailer")), Host: genAnyString(t, "host"),
					RemoteAddr: genAnyString(t, "remote"), RequestURI: genAnyString(t, "uri"), Body: genAnyString(t, "request body"),
					Form: url.Values(genAnyMap(t, "form")), Headers: http.Header(genAnyMap(t, "request headers")),
					URL: genAnyString(t, "url"), Method: genAnyString(t, "method"),
				},
				Response: cassette.Response{
					Proto: "HTTP/1.1", ProtoMinor: int(ints.Draw(t, "minor")), TransferEncoding: te,
					Trailer: http.Header(genAnyMap(t, "response trailer")), ContentLength: ints.Draw(t, "response length"),
					Uncompressed: rapid.Bool().Draw(t, "uncompressed"), Body: genAnyString(t, "response body"),
					Headers: http.Header(genAnyMap(t, "response headers")), Status: genAnyString(t, "status"),
					Code: int(ints.Draw(t, "code")), Duration: time.Duration(ints.Draw(t, "duration")),
				},
			})
		}
		require.Equal(t, referenceDigest(t, c), digestOf(c))
	})
}

func TestDigestOfCommittedCassettes(t *testing.T) {
	for _, text := range committedTexts(t) {
		c, _, err := decodeYAML("f.yaml", []byte(text), "")
		require.NoError(t, err)
		require.Equal(t, referenceDigest(t, c), digestOf(c))
		big := strings.Repeat(text[strings.Index(text, "\n    - id"):], 50)
		c, _, err = decodeYAML("f.yaml", []byte("version: 2\ninteractions:"+big), "")
		require.NoError(t, err)
		require.Equal(t, referenceDigest(t, c), digestOf(c))
	}
}
