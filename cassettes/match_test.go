package cassettes

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genJSON draws a JSON value of bounded depth.
func genJSON(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kind := rapid.IntRange(0, 5).Draw(t, "kind")
		if depth == 0 && kind >= 4 {
			kind = 3
		}
		switch kind {
		case 0:
			return nil
		case 1:
			return rapid.Bool().Draw(t, "bool")
		case 2:
			return float64(rapid.IntRange(-1000, 1000).Draw(t, "number"))
		case 3:
			return rapid.StringMatching(`[a-z ]{0,8}`).Draw(t, "string")
		case 4:
			return rapid.SliceOfN(genJSON(depth-1), 0, 3).Draw(t, "array")
		default:
			return rapid.MapOfN(rapid.StringMatching(`[a-z]{1,4}`), genJSON(depth-1), 0, 4).Draw(t, "object")
		}
	})
}

// writeShuffled encodes v as JSON with object keys in the drawn order and
// drawn whitespace.
func writeShuffled(t *rapid.T, buf *bytes.Buffer, v any) {
	ws := func() { buf.WriteString(rapid.SampledFrom([]string{"", " ", "\n", "\t "}).Draw(t, "ws")) }
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		keys = rapid.Permutation(keys).Draw(t, "keys")
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			ws()
			b, _ := json.Marshal(k)
			buf.Write(b)
			ws()
			buf.WriteByte(':')
			writeShuffled(t, buf, x[k])
		}
		ws()
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			ws()
			writeShuffled(t, buf, e)
		}
		buf.WriteByte(']')
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}

// TestKeyIgnoresLayoutAndVolatileHeaders: two encodings of the same JSON
// value, sent with different volatile headers, have the same key.
func TestKeyIgnoresLayoutAndVolatileHeaders(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.MapOfN(rapid.StringMatching(`[a-z]{1,4}`), genJSON(2), 1, 5).Draw(t, "body")
		var a, b bytes.Buffer
		writeShuffled(t, &a, v)
		writeShuffled(t, &b, v)
		ha := http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}
		hb := ha.Clone()
		for _, h := range []string{"User-Agent", "X-Stainless-Os", "X-Stainless-Arch", "X-Stainless-Runtime-Version", "X-Stainless-Package-Version", "X-Stainless-Retry-Count", "X-Stainless-Timeout", "Idempotency-Key", "X-Api-Key"} {
			if rapid.Bool().Draw(t, "set "+h) {
				hb.Set(h, rapid.StringMatching(`[a-z0-9.]{1,10}`).Draw(t, h))
			}
		}
		ka := canonicalize(t, "POST", "https://api.anthropic.com/v1/messages", ha, a.Bytes())
		kb := canonicalize(t, "post", "HTTPS://API.anthropic.com:443/v1/messages", hb, b.Bytes())
		require.Equal(t, kindJSON, ka.kind)
		require.Equal(t, ka.key(), kb.key(), "%s\n%s", a.String(), b.String())
	})
}

// TestKeySensitiveToBody: changing one leaf value changes the key.
func TestKeySensitiveToBody(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.MapOfN(rapid.StringMatching(`[a-z]{1,4}`), genJSON(1), 1, 5).Draw(t, "body")
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		k := rapid.SampledFrom(keys).Draw(t, "changed key")
		w := map[string]any{}
		for kk, vv := range v {
			w[kk] = vv
		}
		w[k] = []any{"changed", v[k]}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(w)
		h := http.Header{}
		ka := canonicalize(t, "POST", "https://x/y", h, a)
		kb := canonicalize(t, "POST", "https://x/y", h, b)
		require.NotEqual(t, ka.key(), kb.key())
	})
}

func TestCanonicalURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"lower case and default port", "HTTPS://API.Example.com:443/v1/m", "https://api.example.com/v1/m"},
		{"http default port", "http://h:80", "http://h/"},
		{"other port kept", "http://h:8080/p", "http://h:8080/p"},
		{"query sorted, credential redacted", "https://h/p?b=2&key=sekrit&a=1#frag", "https://h/p?a=1&b=2&key=REDACTED"},
		{"user info dropped", "https://user:pw@h/p", "https://h/p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, canonicalURL(u))
		})
	}
	got := redactURL("https://user:pw@h/p?key=sekrit&x=1")
	require.False(t, strings.Contains(got, "sekrit") || strings.Contains(got, "pw"), got)
}

// canonicalize is a request's canonical form, for tests.
func canonicalize(t require.TestingT, method, rawURL string, h http.Header, body []byte) *canonRequest {
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	c := canonicalHead(method, u, h, nil)
	c.setBody(body)
	return c
}

func TestCanonicalHeader(t *testing.T) {
	tests := []struct {
		name, header string
		a, b         []string
		same         bool
	}{
		{"charset on JSON means nothing", "Content-Type", []string{"application/json; charset=utf-8"}, []string{"application/json"}, true},
		{"charset case", "Content-Type", []string{"application/json; charset=UTF-8"}, []string{"Application/JSON"}, true},
		{"charset on text matters", "Content-Type", []string{"text/plain; charset=utf-8"}, []string{"text/plain; charset=latin1"}, false},
		{"another media type", "Content-Type", []string{"application/json"}, []string{"text/plain"}, false},
		{"beta features are a set", "Anthropic-Beta", []string{"b2, b1", "b1"}, []string{"b1,b2"}, true},
		{"another beta", "Anthropic-Beta", []string{"b1"}, []string{"b1,b2"}, false},
		{"a multipart boundary means nothing", "Content-Type", []string{"multipart/form-data; boundary=abc"}, []string{"multipart/form-data; boundary=xyz"}, true},
		{"another multipart type", "Content-Type", []string{"multipart/form-data; boundary=abc"}, []string{"multipart/mixed; boundary=abc"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := canonicalHeader(tt.header, tt.a), canonicalHeader(tt.header, tt.b)
			require.Equal(t, tt.same, a == b, "%q vs %q", a, b)
		})
	}
}

// TestMultipartMatchesByParts: an upload matches whatever its boundary,
// and misses when a part's content, name or file name changes; a body
// that is not well-formed multipart is compared as bytes.
func TestMultipartMatchesByParts(t *testing.T) {
	const u = "https://api.openai.com/v1/files"
	parts := []formPart{
		{name: "purpose", content: []byte("batch")},
		{name: "file", filename: "batch.jsonl", contentType: "application/octet-stream", content: []byte("{\"custom_id\":\"a\"}\n")},
	}
	upload := func(boundary string, ps []formPart) mutant {
		body, ct := multipartBody(t, boundary, ps)
		return mutant{what: boundary, method: "POST", url: u, header: http.Header{"Content-Type": {ct}}, body: body}
	}
	recorded := upload("boundary-recorded", parts)
	cut := recorded
	cut.body = recorded.body[:len(recorded.body)-10]
	path := filepath.Join(t.TempDir(), "upload.yaml")
	recordShapes(t, path, []mutant{recorded, cut})

	require.NoError(t, sendMutant(path, upload("another-boundary-1234", parts)), "the same upload, another boundary")
	require.NoError(t, sendMutant(path, cut), "malformed: the same bytes")
	edited := func(edit func(ps []formPart)) []formPart {
		ps := slices.Clone(parts)
		edit(ps)
		return ps
	}
	for name, ps := range map[string][]formPart{
		"content":   edited(func(ps []formPart) { ps[1].content = []byte("{\"custom_id\":\"b\"}\n") }),
		"name":      edited(func(ps []formPart) { ps[0].name = "purpose2" }),
		"file name": edited(func(ps []formPart) { ps[1].filename = "other.jsonl" }),
		"order":     {parts[1], parts[0]},
	} {
		err := sendMutant(path, upload("another-boundary-1234", ps))
		require.True(t, errorsIsMiss(err), "changed part %s: %v", name, err)
	}
	malformed := upload("another-boundary-1234", parts)
	malformed.body = malformed.body[:len(malformed.body)-10]
	require.True(t, errorsIsMiss(sendMutant(path, malformed)), "malformed under another boundary is other bytes")
}

// TestCompressedRequestMatchesDecoded: a request body with a
// Content-Encoding is compared after decoding: gzip or deflate of the
// same JSON (in any layout) matches the plain recording and the other way
// round; changed content misses; compressed bytes sent without their
// Content-Encoding are not the body they decode to.
func TestCompressedRequestMatchesDecoded(t *testing.T) {
	const u = "https://api.anthropic.com/v1/messages"
	plainBody := `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	req := func(body []byte, coding string) mutant {
		h := http.Header{"Content-Type": {"application/json"}}
		if coding != "" {
			h.Set("Content-Encoding", coding)
		}
		return mutant{what: coding, method: "POST", url: u, header: h, body: body}
	}
	deflated := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	dir := t.TempDir()
	plain, gz := filepath.Join(dir, "plain.yaml"), filepath.Join(dir, "gzip.yaml")
	recordShapes(t, plain, []mutant{req([]byte(plainBody), "")})
	recordShapes(t, gz, []mutant{req(gzipBytes(t, []byte(plainBody)), "gzip")})

	reordered := `{"messages":[{"content":"hi","role":"user"}], "max_tokens":16, "model":"m"}`
	changed := strings.Replace(plainBody, `"hi"`, `"ho"`, 1)
	for _, tt := range []struct {
		name, cassette string
		m              mutant
		served         bool
	}{
		{"gzip of the same JSON", plain, req(gzipBytes(t, []byte(reordered)), "gzip"), true},
		{"deflate of the same JSON", plain, req(deflated(reordered), "deflate"), true},
		{"plain against a gzip recording", gz, req([]byte(reordered), ""), true},
		{"gzip of changed content", plain, req(gzipBytes(t, []byte(changed)), "gzip"), false},
		{"plain changed content against a gzip recording", gz, req([]byte(changed), ""), false},
		{"gzip bytes without their Content-Encoding", gz, req(gzipBytes(t, []byte(plainBody)), ""), false},
		{"not gzip at all", gz, req([]byte(plainBody), "gzip"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := sendMutant(tt.cassette, tt.m)
			if tt.served {
				require.NoError(t, err)
			} else {
				require.True(t, errorsIsMiss(err), "%v", err)
			}
		})
	}
}

// TestDecodingChargesOneBudget: what the request bodies of one cassette
// decode to for matching is charged to one budget, so many small bombs
// cost no more than one big body: past the budget a body is compared as
// the bytes it could not be decoded from.
func TestDecodingChargesOneBudget(t *testing.T) {
	body := gzipBomb(t, 600<<10)
	h := http.Header{"Content-Type": {"application/octet-stream"}, "Content-Encoding": {"gzip"}}
	budget := int64(1 << 20)
	var scratch []byte
	kinds := make([]string, 2)
	for i := range kinds {
		c := canonicalHead("POST", &url.URL{Scheme: "https", Host: "h", Path: "/"}, h, nil)
		c.setBodyString(body, &scratch, &budget)
		kinds[i] = c.kind
	}
	require.Equal(t, []string{kindBytes, kindUndecodable}, kinds)
}

// FuzzCanonicalMultipart: any body under any boundary is canonicalized
// without panicking, and a well-formed one means the same once its parts
// are written again under another boundary.
func FuzzCanonicalMultipart(f *testing.F) {
	seed, _ := multipartBody(f, "b", []formPart{
		{name: "file", filename: "a.wav", contentType: "audio/wav", content: []byte("RIFF\x00\xff")},
		{name: "model", content: []byte("whisper-1")},
	})
	f.Add(seed)
	f.Add([]byte("preamble\r\n--b\r\nX:  y \r\n\r\n\r\n--b--\r\nepilogue"))
	f.Fuzz(func(t *testing.T, body []byte) {
		canon, ok := canonicalMultipart(body, "b")
		if !ok || bytes.Contains(body, []byte("other")) {
			return
		}
		var again bytes.Buffer
		w := multipart.NewWriter(&again)
		require.NoError(t, w.SetBoundary("other"))
		r := multipart.NewReader(bytes.NewReader(body), "b")
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			pw, err := w.CreatePart(p.Header)
			require.NoError(t, err)
			_, err = io.Copy(pw, p)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		other, ok := canonicalMultipart(again.Bytes(), "other")
		require.True(t, ok, "%q", again.Bytes())
		require.Equal(t, string(canon), string(other))
	})
}

// TestMultipartPartsBounded: a body of more than maxParts parts is
// compared as bytes, not part by part.
func TestMultipartPartsBounded(t *testing.T) {
	parts := make([]formPart, maxParts)
	for i := range parts {
		parts[i] = formPart{name: fmt.Sprint(i)}
	}
	body, _ := multipartBody(t, "b", parts)
	_, ok := canonicalMultipart(body, "b")
	require.True(t, ok)
	body, _ = multipartBody(t, "b", append(parts, formPart{name: "one more"}))
	_, ok = canonicalMultipart(body, "b")
	require.False(t, ok)
}

// TestNullMemberMeansAbsent: a request whose body differs from the
// recording only by object members set to null, at any depth, is served;
// one where a null replaces a value misses, and the miss's body diff
// names the member that differs and never a null member the two sides
// only spell differently.
func TestNullMemberMeansAbsent(t *testing.T) {
	const recorded = `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"options":{"seed":42}}`
	tests := []struct {
		name, body string
		diff       []string // nil: served
	}{
		{"null member added", `{"model":"llama3.2","messages":[{"role":"user","content":"hi","images":null}],"options":{"seed":42,"stop":null},"format":null}`, nil},
		{"null replaces a value", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"options":{"seed":null}}`,
			[]string{`["options"]["seed"]: 42 != (missing)`}},
		{"null replaces an object", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"options":null}`,
			[]string{`["options"]: {"seed":42} != (missing)`}},
		{"null array element", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"},null],"options":{"seed":42}}`,
			[]string{`["messages"][1]: (missing) != null`}},
		{"another change beside a null member", `{"model":"llama3.3","messages":[{"role":"user","content":"hi"}],"options":{"seed":42},"format":null}`,
			[]string{`["model"]: "llama3.2" != "llama3.3"`}},
	}
	srv := echoServer(t)
	path := recordPlain(t, t.TempDir(), "null", srv, []plainReq{{method: "POST", path: "/api/chat", body: recorded}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: true, Hint: "rerecord"})
			require.NoError(t, err)
			defer c.Close()
			resp, err := send(c.Client(), srv.URL, plainReq{method: "POST", path: "/api/chat", body: tt.body})
			if tt.diff == nil {
				require.NoError(t, err)
				require.Contains(t, readAll(t, resp), `"n":1`)
				return
			}
			require.ErrorIs(t, err, ErrInteractionNotFound)
			_, diff, ok := strings.Cut(err.Error(), "body (recorded vs requested):\n")
			require.True(t, ok, err.Error())
			diff, _, _ = strings.Cut(diff, "\nif the request change")
			var lines []string
			for l := range strings.Lines(diff) {
				lines = append(lines, strings.TrimSpace(l))
			}
			require.Equal(t, tt.diff, lines)
		})
	}

	t.Run("merge patch", func(t *testing.T) {
		require.Equal(t, "Content-Type", matchHeaders[contentTypeHeader])
		patch := http.Header{"Content-Type": {"application/merge-patch+json"}}
		cleared := plainReq{method: "PATCH", path: "/v1/stores/1", body: `{"name":"a","expires_after":null}`, header: patch}
		path := recordPlain(t, t.TempDir(), "patch", srv, []plainReq{cleared})
		c, err := Open(path, Config{AllowUnused: true})
		require.NoError(t, err)
		defer c.Close()
		_, err = send(c.Client(), srv.URL, plainReq{method: "PATCH", path: "/v1/stores/1", body: `{"name":"a"}`, header: patch})
		require.ErrorIs(t, err, ErrInteractionNotFound, "in a merge patch null removes a member: it is not absence")
		require.ErrorContains(t, err, `["expires_after"]: null != (missing)`)
		resp, err := send(c.Client(), srv.URL, cleared)
		require.NoError(t, err)
		readAll(t, resp)
	})
}
