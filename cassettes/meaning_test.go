package cassettes

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// meaningKey is the recording key the tests below hide in a cassette's
// meaning without writing it in its text.
const meaningKey = "zq7-Wv3-Kp9-Ld2-Rt5-Mx8-Hb4-Nc6"

func gzipped(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := io.WriteString(w, s)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.String()
}

// gzipBomb is a gzip stream of n zero bytes.
func gzipBomb(t testing.TB, n int) string {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for n > 0 {
		k, err := w.Write(zeros[:min(n, len(zeros))])
		require.NoError(t, err)
		n -= k
	}
	require.NoError(t, w.Close())
	return b.String()
}

// requireNoKeyBytes fails if msg holds 8 consecutive bytes of key.
func requireNoKeyBytes(t testing.TB, msg, key string) {
	t.Helper()
	for i := 0; i+8 <= len(key); i++ {
		require.NotContains(t, msg, key[i:i+8], "bytes of the key at %d reached:\n%s", i, msg)
	}
}

// marshalOne is the cassette go-vcr writes for one POST whose response
// has the given headers and body.
func marshalOne(t testing.TB, h http.Header, body string) string {
	t.Helper()
	c := cassette.New("")
	c.AddInteraction(&cassette.Interaction{
		Request: cassette.Request{Method: "POST", URL: "https://api.example.com/v1/messages", Body: "{}",
			Headers: http.Header{"Content-Type": {"application/json"}}},
		Response: cassette.Response{Code: 200, Status: "200 OK", Headers: h, Body: body},
	})
	data, err := yaml.Marshal(c)
	require.NoError(t, err)
	return "---\n" + string(data)
}

// yamlEscaped writes s as a double-quoted YAML scalar, every byte escaped.
func yamlEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// hiddenKeyCassettes hold meaningKey in what they mean, never in their
// text.
func hiddenKeyCassettes(t testing.TB) map[string]string {
	t.Helper()
	const head = "---\nversion: 2\ninteractions:\n"
	one := func(reqHeaders, url string) string {
		return "    - id: 0\n      request:\n        body: '{}'\n        headers:\n" + reqHeaders +
			"        url: " + url + "\n        method: POST\n      response:\n        body: '{}'\n        status: 200 OK\n        code: 200\n"
	}
	plain := "            Content-Type:\n                - application/json\n"
	var pct strings.Builder
	for i := 0; i < len(meaningKey); i++ {
		fmt.Fprintf(&pct, "%%%02X", meaningKey[i])
	}
	return map[string]string{
		"a body with an invalid UTF-8 byte": marshalOne(t, http.Header{"Content-Type": {"text/plain"}}, "\xff "+meaningKey),
		"a gzip body": marshalOne(t, http.Header{"Content-Type": {"text/plain"}, "Content-Encoding": {"gzip"}},
			gzipped(t, "config: "+meaningKey)),
		"an alias to an escaped scalar": head +
			one("            X-Note:\n                - &k "+yamlEscaped(meaningKey)+"\n"+plain, "https://api.example.com/a") +
			one("            X-Other:\n                - *k\n"+plain, "https://api.example.com/b"),
		"a merge key":                   head + one("            <<: {X-Note: ["+yamlEscaped(meaningKey)+"]}\n"+plain, "https://api.example.com/a"),
		"a percent-encoded query value": head + one(plain, "https://api.example.com/v1?q="+pct.String()),
	}
}

// TestOpenRefusesKeyInMeaning: a cassette that holds the recording key in
// what it decodes to, but not in its text, is refused by Open, with and
// without a manifest that vouches for it, without showing the key.
func TestOpenRefusesKeyInMeaning(t *testing.T) {
	for name, text := range hiddenKeyCassettes(t) {
		t.Run(name, func(t *testing.T) {
			require.NotContains(t, text, meaningKey, "the key is hidden from the text")
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			_, err := Open(path, Config{APIKey: meaningKey, AllowUnused: true})
			require.ErrorIs(t, err, errSecret, "no manifest")
			requireNoKeyBytes(t, err.Error(), meaningKey)
			writeManifestFor(t, dir, "c.yaml")
			_, err = Open(path, Config{APIKey: meaningKey, AllowUnused: true})
			require.ErrorIs(t, err, errSecret, "vouched for by a manifest")
			requireNoKeyBytes(t, err.Error(), meaningKey)
			_, err = Open(path, Config{APIKey: "another-key-entirely", AllowUnused: true})
			require.NoError(t, err, "another key is not in it")
		})
	}
}

// TestSaveRefusesKeyInMeaning: recording a response that holds the key in
// a body yaml.v3 writes as !!binary, or in a gzip body the client asked
// for, writes nothing.
func TestSaveRefusesKeyInMeaning(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		body   string
	}{
		{"a body with an invalid UTF-8 byte", http.Header{"Content-Type": {"text/plain"}}, "\xff " + meaningKey},
		{"a gzip body", http.Header{"Content-Type": {"text/plain"}, "Content-Encoding": {"gzip"}}, gzipped(t, "config: "+meaningKey)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: tt.header.Clone(), Body: io.NopCloser(strings.NewReader(tt.body)), Request: r}, nil
			})
			c, err := Open(path, Config{Mode: Record, RealTransport: rt, APIKey: meaningKey})
			require.NoError(t, err)
			readAll(t, do(t, c.Client(), "https://api.example.com", plainReq{method: "POST", path: "/v1/messages", body: `{}`,
				header: http.Header{"Accept-Encoding": {"gzip"}}}))
			err = c.Close()
			require.ErrorIs(t, err, errSecret)
			requireNoKeyBytes(t, err.Error(), meaningKey)
			_, statErr := os.Stat(path)
			require.ErrorIs(t, statErr, os.ErrNotExist, "nothing written")
		})
	}
}

// TestCredentialHeadersThroughAliases: a credential header whose value is
// reached through an alias or a merge key is refused as the same header
// written plainly is, with and without a manifest, naming the header and
// the line its value is written on.
func TestCredentialHeadersThroughAliases(t *testing.T) {
	const cookie = "sid=Q8wE3rT6yU1iO9pA4sD7"
	const head = "---\nversion: 2\ninteractions:\n    - id: 0\n      request:\n        body: '{}'\n        headers:\n"
	const tail = "        url: https://api.example.com/a\n        method: POST\n      response:\n        body: '{}'\n"
	tests := []struct {
		name, text, header string
		line               int
	}{
		{"Cookie: *c", head + "            X-Trace: &c\n                - " + cookie + "\n            Cookie: *c\n" + tail +
			"        status: 200 OK\n        code: 200\n", "Cookie", 9},
		{"<<: {Set-Cookie: [...]}", head + "            Content-Type: [application/json]\n" + tail +
			"        headers:\n            <<: {Set-Cookie: [" + cookie + "]}\n            Content-Type: [text/plain]\n        status: 200 OK\n        code: 200\n",
			"Set-Cookie", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			_, err := Open(path, Config{AllowUnused: true})
			require.ErrorIs(t, err, errSecret, "no manifest")
			writeManifestFor(t, dir, "c.yaml")
			_, vouchedErr := Open(path, Config{AllowUnused: true})
			for _, err := range []error{err, vouchedErr} {
				require.ErrorIs(t, err, errSecret)
				require.Contains(t, err.Error(), "the "+tt.header+" header")
				require.NotContains(t, err.Error(), cookie[4:12])
				var ce *CassetteError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, tt.line, ce.Line)
			}
		})
	}
}

// TestOpenRefusesUndecodableBody: a body whose Content-Encoding cannot be
// undone cannot be checked, so the cassette is refused.
func TestOpenRefusesUndecodableBody(t *testing.T) {
	for name, h := range map[string]http.Header{
		"not gzip":            {"Content-Encoding": {"gzip"}},
		"a coding we lack":    {"Content-Encoding": {"br"}},
		"gzip then not gzip":  {"Content-Encoding": {"gzip, gzip"}},
		"a gzip bomb (large)": nil,
	} {
		t.Run(name, func(t *testing.T) {
			body := "plain text"
			if h == nil {
				h = http.Header{"Content-Encoding": {"gzip"}}
				body = gzipBomb(t, maxDecodedBytes+1)
			} else if name == "gzip then not gzip" {
				body = gzipped(t, "plain text")
			}
			path := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(marshalOne(t, h, body)), 0o644))
			_, err := Open(path, Config{AllowUnused: true})
			require.ErrorIs(t, err, errInvalidCassette)
			require.Contains(t, err.Error(), "cannot be checked for secrets")
		})
	}
}

// TestOpenReadsGzipBody: a gzip body the client asked for replays as
// recorded, compressed, with its header.
func TestOpenReadsGzipBody(t *testing.T) {
	body := gzipped(t, `{"ok":true}`)
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(marshalOne(t, http.Header{"Content-Encoding": {"gzip"}}, body)), 0o644))
	c, err := Open(path, Config{APIKey: meaningKey})
	require.NoError(t, err)
	resp := do(t, c.Client(), "https://api.example.com", plainReq{method: "POST", path: "/v1/messages", body: "{}",
		header: http.Header{"Content-Type": {"application/json"}, "Accept-Encoding": {"gzip"}}})
	require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	require.Equal(t, body, readAll(t, resp))
	require.NoError(t, c.Close())
}

// TestOpenScansMeaning: the secret ruleset reads what a cassette decodes
// to, so a credential the text hides (compressed, base64, escaped) is
// refused by Open and by Verify.
func TestOpenScansMeaning(t *testing.T) {
	const token = "ghp_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3b"
	for name, text := range map[string]string{
		"gzip":    marshalOne(t, http.Header{"Content-Encoding": {"gzip"}}, gzipped(t, `{"t":"`+token+`"}`)),
		"binary":  marshalOne(t, nil, "\xfe"+token),
		"escaped": strings.Replace(marshalOne(t, nil, "BODY"), "BODY", yamlEscaped(token), 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotContains(t, text, token)
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			_, err := Open(path, Config{AllowUnused: true})
			require.ErrorIs(t, err, errSecret)
			require.Contains(t, err.Error(), "what the cassette decodes to")
			requireNoKeyBytes(t, err.Error(), token)
			writeManifestFor(t, dir, "c.yaml")
			require.ErrorIs(t, Verify(dir, VerifyConfig{}), errSecret)
		})
	}
}

// TestCredentialLineInLargeCassette: past maxTreeBytes, the line of a
// credential is found by parsing its interaction's own lines.
func TestCredentialLineInLargeCassette(t *testing.T) {
	big := strings.Repeat("lorem ipsum ", 64<<10/12)
	item := func(id int, headers string) string {
		return fmt.Sprintf("    - id: %d\n      request:\n        body: %s\n        headers:\n%s        url: https://api.example.com/%d\n        method: POST\n      response:\n        body: '{}'\n        status: 200 OK\n        code: 200\n",
			id, big, headers, id)
	}
	var b strings.Builder
	b.WriteString("---\nversion: 2\ninteractions:\n")
	n := maxTreeBytes/len(big) + 2
	for id := range n - 1 {
		b.WriteString(item(id, "            Content-Type: [application/json]\n"))
	}
	line := strings.Count(b.String(), "\n") + 6
	b.WriteString(item(n-1, "            X-Trace: &c\n                - sid=Q8wE3rT6yU1iO9pA4sD7\n            Cookie: *c\n"))
	require.Greater(t, b.Len(), maxTreeBytes)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	writeManifestFor(t, dir, "big.yaml") // so that the ruleset does not run
	_, err := Open(path, Config{AllowUnused: true})
	require.ErrorIs(t, err, errSecret)
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, line, ce.Line)
}

// TestScanVerdictIsPerText: two texts that mean the same (one with a
// token in a comment) do not share the ruleset's verdict.
func TestScanVerdictIsPerText(t *testing.T) {
	clean := marshalOne(t, nil, "{}")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(a, []byte(clean), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(clean+"# ghp_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3b\n"), 0o644))
	_, err := Open(a, Config{AllowUnused: true})
	require.NoError(t, err)
	_, err = Open(b, Config{AllowUnused: true})
	require.ErrorIs(t, err, errSecret)
}
