package cassettes

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
	"pgregory.net/rapid"
)

// requireDecodedAlike fails unless text decodes here exactly as go-vcr's
// cassette.Load decodes it (yaml.Unmarshal into a cassette.Cassette), or
// is refused, whole and in batches of every size tried; it reports
// whether it decoded whole.
func requireDecodedAlike(t require.TestingT, text string) bool {
	c, lines, err := decodeYAML("f.yaml", []byte(text), "")
	if err != nil {
		for _, size := range []int{1, 100, batchBytes} {
			_, _, err := decodeBatched([]byte(text), size)
			require.Error(t, err, "batches of %d decoded what the whole refuses:\n%s", size, text)
		}
		return false
	}
	want := cassette.New("")
	require.NoError(t, yaml.Unmarshal([]byte(text), want), "decoded text go-vcr refuses:\n%s", text)
	require.Equal(t, want.Interactions, c.Interactions, "%s", text)
	require.Len(t, lines, len(c.Interactions))
	for _, size := range []int{1, 100, batchBytes} {
		bc, blines, err := decodeBatched([]byte(text), size)
		if err != nil {
			continue // decoded whole
		}
		require.Equal(t, c.Interactions, bc.Interactions, "batches of %d:\n%s", size, text)
		require.Equal(t, lines, blines, "batches of %d:\n%s", size, text)
	}
	return true
}

// committedTexts are the committed cassettes and their YAML shapes.
func committedTexts(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, glob := range []string{"testdata/*.yaml", "testdata/recorders/*.yaml"} {
		files, err := filepath.Glob(glob)
		require.NoError(t, err)
		require.NotEmpty(t, files, glob)
		for _, f := range files {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			out = append(out, string(raw))
		}
	}
	return out
}

// TestDecodeReadsCommittedCassettes: every committed cassette, go-vcr v3's
// and v4's, decodes as go-vcr decodes it.
func TestDecodeReadsCommittedCassettes(t *testing.T) {
	for _, text := range committedTexts(t) {
		require.True(t, requireDecodedAlike(t, text), "a committed cassette was refused:\n%.300s", text)
	}
	require.True(t, requireDecodedAlike(t, smallCassetteText), "FuzzDecode's seed was refused")
}

// yamlEdgeCases are texts that exercise how YAML reads scalars,
// indentation, collections, aliases, merge keys and tags.
var yamlEdgeCases = []string{
	"version: 2\ninteractions: []\n",
	"---\nversion: 2\n",
	"version: 2\ninteractions:\n- id: 0\n  request:\n    body: |-\n      a\n\n       b\n\n\n    method: POST\n",
	"version: 2\ninteractions:\n    - id: 1\n      request:\n        body: |+\n            x\n\n      response:\n        code: 200\n",
	"version: 2\ninteractions:\n    - request:\n        body: |2\n            lead\n          x\n        url: u\n",
	"version: 2\ninteractions:\n    - request:\n        body: |\n\n          after a blank\n        url: u\n",
	"version: 2\ninteractions:\n    - request:\n        body: |\n          tab\tinside\n        url: u\n",
	"version: 2\ninteractions:\n    - request:\n        body: |\n          last line without newline",
	"version: 2\ninteractions:\n    - request:\n        headers:\n            A:\n                - 'it''s'\n                - \"\\x41\\u00e9\\U0001F600\\t\\\\\\\"\\N\\_\\L\\P\\0\\e\"\n            B: []\n          \n            C:\n            - plain value  \n        form: {}\n        trailer:\n            X:\n                - \"\"\n",
	"version: 2\ninteractions:\n    - response:\n        code: -1\n        content_length: 123456789012345678\n        uncompressed: True\n        duration: 1.5s\n    - response:\n        duration: \"0\"\n        uncompressed: FALSE\n",
	"version: 2\ninteractions:\n    - response:\n        duration: 0\n",
	"version: 2\ninteractions:\n    - response:\n        headers:\n            \"N\": []\n            'Y':\n                - :a\n                - -b\n        status: |4+\n        code: 200\n",
	"version: 2\ninteractions:\n    - response:\n        status: |+\n\n\n        code: 200\n",
	"version: 2\ninteractions:\n    - response:\n        status: |\n            \t\n        code: 200\n",
	"version: 2\ninteractions:\n    - response:\n        status: |2\n          \tx\n        code: 200\n",
	"version: 2\ninteractions:\n    - response:\n        headers:\n            A:\n                - |4\n                   #event: x\n",
	"version: 2\ninteractions:\n    - response:\n        headers:\n            A:\n                - |\n                  two\n                  lines\n",
	"version: 2\ninteractions:\n    - response:\n        code: 010\n",
	"version: 2\ninteractions:\n    - response:\n        code: 0x10\n",
	"version: 2\ninteractions:\n    - response:\n        uncompressed: yes\n",
	"version: 2\ninteractions:\n    - request:\n        body: ~\n",
	"version: 2\ninteractions:\n    - request:\n        body:\n        url: u\n",
	"version: 2\ninteractions:\n    - request:\n        body: a # comment\n",
	"version: 2\ninteractions:\n    - request:\n        body: multi\n          line\n",
	"version: 2\ninteractions:\n    - request:\n        body: 'unclosed\n          line'\n",
	"version: 2\ninteractions:\n    - request:\n        url: a\n        url: b\n",
	"version: 2\ninteractions:\n    - request:\n        headers:\n            A: [x]\n",
	"version: 2\ninteractions:\n    - request:\n        headers:\n            A:\n                - x\n            A:\n                - y\n",
	"version: 2\ninteractions:\n    - request:\n        headers:\n            A:\n                - ~\n",
	"version: 2\ninteractions:\n    - request:\n        method: &a POST\n",
	"version: 2\ninteractions:\n    - request:\n        method: !!str POST\n",
	"version: 2\ninteractions:\n    - request:\n        unknown: x\n",
	"version: 2\ninteractions:\n    - ~\n",
	"version: 3\ninteractions: []\n",
	"version: 2\r\ninteractions: []\r\n",
	"version: 2\ninteractions: []\n---\nversion: 2\n",
	"version: 2\ninteractions:\n    - id: 0\n...\n    - id: 1\n",
	"---\nversion: 2\ninteractions:\n- id: 0\n---\n- id: 1\n",
	"version: 2\ninteractions:\n    - request: &r\n        url: u\n        method: GET\n    - request: *r\n      response:\n        <<: {code: 200}\n",
	"version: 2\ninteractions:\n    - request:\n        body: \"a\n    - id: 1\n          b\"\n    - id: 2\n",
	"version: 2\ninteractions:\n    - request:\n        body: !!binary /w==\n        headers: {A: [x]}\n",
	"version: 2\ninteractions:\n- id: 0\n  request: {url: u}\n- id: 1\nfoo: bar\n",
	"version: 2\ninteractions:\n   - \n0",
	"version: 2\ninteractions:\n    - id: 0\n# comment\n    - id: 1\n",
	"version: 2\ninteractions: []\n...\n",
	"\tversion: 2\n",
	"interactions: []\n",
	"",
}

// smallCassetteText is one interaction as go-vcr writes it: a seed small
// enough for the fuzzer to minimise what it finds in well under a second.
const smallCassetteText = `---
version: 2
interactions:
    - id: 0
      request:
        proto: HTTP/1.1
        proto_major: 1
        proto_minor: 1
        content_length: 52
        host: ""
        body: |
            {"max_tokens": 16, "model": "m", "messages": []}
        headers:
            Content-Type:
                - application/json; charset=utf-8
            X-Api-Key:
                - '[FILTERED]'
        url: https://api.anthropic.com/v1/messages?beta=true
        method: POST
      response:
        proto: HTTP/1.1
        proto_major: 1
        proto_minor: 1
        content_length: -1
        body: "event: ping\ndata: {\"type\": \"ping\"}\n\n"
        headers:
            Content-Type:
                - text/event-stream
        status: 200 OK
        code: 200
        duration: 1.5s
`

// FuzzDecode: whatever decodes, decodes as go-vcr decodes it, and the
// secret checks read it without failing. The
// committed cassettes are checked by TestDecodeReadsCommittedCassettes;
// the seeds stay small so that a plain -fuzztime run fuzzes.
func FuzzDecode(f *testing.F) {
	f.Add(smallCassetteText)
	for _, text := range yamlEdgeCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if requireDecodedAlike(t, text) {
			if p, err := parseCassette("f.yaml", []byte(text), ""); err == nil {
				findSecret(p, "key-for-the-fuzzer", true)
			}
		}
	})
}

func TestDecodeEdgeCases(t *testing.T) {
	accepted := 0
	for _, text := range yamlEdgeCases {
		if requireDecodedAlike(t, text) {
			accepted++
		}
	}
	require.Greater(t, accepted, 8, "the edge cases decode")
}

// genField draws a string rich in what makes yaml.v3 quote, escape or
// fold: spaces at either end, quotes, colons, hashes, line breaks, tabs,
// controls and non-ASCII text.
func genField(t *rapid.T, label string) string {
	parts := rapid.SliceOfN(rapid.SampledFrom([]string{
		"a", "Z", "0", "7", " ", "  ", "\n", "\n\n", "\t", "'", "\"", ":", ": ", "#", " #", "-", "- ", "|", ">",
		"\\", "{", "}", "[", "]", ",", "&", "*", "!", "%", "@", "`", "~", "null", "true", "1.5", "0x1f", "---",
		"é", "中", "😀", "\x00", "\x01", "\r", "\x7f", "\u0085", "\u00a0", "data: {\"a\":1}", "event: x\n",
	}), 0, 12).Draw(t, label)
	return strings.Join(parts, "")
}

func genHeader(t *rapid.T, label string) http.Header {
	if rapid.IntRange(0, 4).Draw(t, label+" kind") == 0 {
		return nil
	}
	h := http.Header{}
	for range rapid.IntRange(0, 3).Draw(t, label+" size") {
		name := rapid.StringMatching(`[A-Z][a-z]{0,5}(-[A-Z][a-z]{0,5}){0,2}`).Draw(t, label+" name")
		value := rapid.Custom(func(t *rapid.T) string { return strings.ReplaceAll(genField(t, "value"), "\n", " ") })
		h[name] = rapid.SliceOfN(value, 0, 2).Draw(t, label+" values")
	}
	return h
}

// TestDecodeAcceptsWhatGoVCRWrites: every cassette go-vcr writes that
// yaml.v3 reads back decodes as go-vcr decodes it. Header values hold no
// line break: HTTP has none, and yaml.v3 misreads, or cannot read, some
// literal block scalars it writes in sequences.
func TestDecodeAcceptsWhatGoVCRWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := cassette.New("")
		for range rapid.IntRange(0, 3).Draw(t, "interactions") {
			c.AddInteraction(&cassette.Interaction{
				Request: cassette.Request{
					Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					ContentLength:    int64(rapid.IntRange(-1, 1<<20).Draw(t, "request length")),
					TransferEncoding: rapid.SliceOfN(rapid.SampledFrom([]string{"chunked", "gzip"}), 0, 2).Draw(t, "transfer encoding"),
					Trailer:          genHeader(t, "request trailer"),
					Host:             genField(t, "host"),
					Body:             genField(t, "request body"),
					Form:             url.Values(genHeader(t, "form")),
					Headers:          genHeader(t, "request headers"),
					URL:              "https://api.example.com/v1?q=" + url.QueryEscape(genField(t, "query")),
					Method:           rapid.SampledFrom([]string{"GET", "POST"}).Draw(t, "method"),
				},
				Response: cassette.Response{
					Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					ContentLength: int64(rapid.IntRange(-1, 1<<20).Draw(t, "response length")),
					Uncompressed:  rapid.Bool().Draw(t, "uncompressed"),
					Trailer:       genHeader(t, "response trailer"),
					Body:          genField(t, "response body"),
					Headers:       genHeader(t, "response headers"),
					Status:        genField(t, "status"),
					Code:          rapid.IntRange(100, 599).Draw(t, "code"),
					Duration:      time.Duration(rapid.Int64Range(-1e12, 1e12).Draw(t, "duration")),
				},
			})
		}
		data, err := yaml.Marshal(c)
		require.NoError(t, err)
		text := "---\n" + string(data)
		want := cassette.New("")
		if yaml.Unmarshal([]byte(text), want) == nil {
			require.True(t, requireDecodedAlike(t, text), "refused what go-vcr writes and reads:\n%s", text)
		}
	})
}

// TestDecodeBatchesLargeCassettes: a cassette of many interactions in the
// layout go-vcr writes decodes in batches exactly as whole; an alias to an
// anchor in an earlier batch makes it decode whole, as go-vcr does, when
// it is small enough, and refused when it is not.
func TestDecodeBatchesLargeCassettes(t *testing.T) {
	raw, err := os.ReadFile(benchCassette(t, 300) + ".yaml")
	require.NoError(t, err)
	require.Greater(t, len(raw), 4*batchBytes)
	c, lines, err := decodeYAML("f.yaml", raw, "")
	require.NoError(t, err)
	bc, blines, err := decodeBatched(raw, batchBytes)
	require.NoError(t, err)
	require.Equal(t, c.Interactions, bc.Interactions)
	require.Equal(t, lines, blines)

	text := strings.Replace(string(raw), "method: POST", "method: &m POST", 1)
	i := strings.LastIndex(text, "method: POST")
	text = text[:i] + "method: *m" + text[i+len("method: POST"):]
	_, _, err = decodeBatched([]byte(text), batchBytes)
	require.ErrorContains(t, err, "unknown anchor")
	require.True(t, requireDecodedAlike(t, text))
	p, err := parseCassette("f.yaml", []byte(text), "")
	require.NoError(t, err)
	require.Len(t, p.c.Interactions, 300)

	item := text[strings.Index(text, "    - id: 1\n"):strings.Index(text, "    - id: 2\n")]
	big := text + strings.Repeat(item, maxTreeBytes/len(item)+1)
	_, err = parseCassette("f.yaml", []byte(big), "")
	require.ErrorIs(t, err, errInvalidCassette)
	require.ErrorContains(t, err, "layout go-vcr writes")
}

// sharesBytes reports whether s's bytes lie in text.
func sharesBytes(text []byte, s string) bool {
	if s == "" || len(text) == 0 {
		return false
	}
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(text)))
	return p >= b && p+uintptr(len(s)) <= b+uintptr(len(text))
}

// TestDecodeSharesVerbatimBodies: a body the text holds as it decodes
// (plain, single- or double-quoted on one line, without escapes) is held
// in the text's bytes, not copied, so a large cassette's bodies take no
// memory beyond its text; a body written otherwise (an escape, a doubled
// quote, a block scalar, !!binary) is decoded as yaml.v3 decodes it. Both
// decode as the whole text does.
func TestDecodeSharesVerbatimBodies(t *testing.T) {
	bodies := []struct {
		name   string
		body   string
		shared bool
	}{
		{"single-quoted JSON", `{"model":"claude","max_tokens":64}`, true},
		{"plain", "hello world", true},
		{"doubled quote", `{"text":"it's"}`, false},
		{"escape", "tab\there", false},
		{"block", "line one\nline two\n", false},
		{"binary", "\xff\xfe not UTF-8", false},
	}
	c := cassette.New("")
	for _, b := range bodies {
		c.AddInteraction(&cassette.Interaction{
			Request:  cassette.Request{Method: "POST", URL: "https://api.example.com/v1", Body: b.body},
			Response: cassette.Response{Code: 200, Status: "200 OK", Body: b.body},
		})
	}
	out, err := yaml.Marshal(c)
	require.NoError(t, err)
	raw := append([]byte("---\n"), out...)
	whole, _, err := decodeYAML("f.yaml", raw, "")
	require.NoError(t, err)
	for _, size := range []int{1, batchBytes} {
		bc, _, err := decodeBatched(raw, size)
		require.NoError(t, err)
		require.Equal(t, whole.Interactions, bc.Interactions)
		for i, b := range bodies {
			in := bc.Interactions[i]
			require.Equal(t, b.body, in.Request.Body, b.name)
			require.Equal(t, b.shared, sharesBytes(raw, in.Request.Body), "%s request (batches of %d):\n%s", b.name, size, raw)
			require.Equal(t, b.shared, sharesBytes(raw, in.Response.Body), "%s response (batches of %d)", b.name, size)
		}
	}
}
