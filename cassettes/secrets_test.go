package cassettes

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

// TestMissMasksBeforeExcerpting: the excerpt of a non-JSON body around the
// first differing byte starts inside a long key, where no rule can
// recognise what is left of it; the body is masked whole first, and the
// recording key is masked wherever it appears.
func TestMissMasksBeforeExcerpting(t *testing.T) {
	ant := "sk-ant-api03-" + strings.Repeat("Q8wE3rT6yU", 9)
	own := "zq7-Wv3-Kp9-Ld2-Rt5-Mx8-Hb4-Nc6"
	tests := []struct {
		name, secret, apiKey string
	}{
		{"pattern", ant, ""},
		{"apikey", own, own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t)
			rec := plainReq{method: "POST", path: "/p", body: "payload " + tt.secret + " A tail", header: http.Header{"Content-Type": {"text/plain"}}}
			req := rec
			req.body = "payload " + tt.secret + " B tail"
			path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{rec})
			// The recorded body holds the secret: make the file acceptable
			// to Open by keeping the check for this test's purpose out.
			c, err := openUnscanned(path, Config{AllowUnused: true, APIKey: tt.apiKey})
			require.NoError(t, err)
			_, err = send(c.Client(), srv.URL, req)
			require.ErrorIs(t, err, ErrInteractionNotFound)
			msg := err.Error()
			require.Contains(t, msg, `(body): "…A…" != "…B…"`, "the words that differ, not the secret around them")
			for i := 0; i+8 <= len(tt.secret); i++ {
				require.NotContains(t, msg, tt.secret[i:i+8], "8 bytes of the secret at %d reached the message:\n%s", i, msg)
			}
		})
	}
}

// openUnscanned opens a replay cassette whose file holds a secret on
// purpose: the secret check is what other tests test.
func openUnscanned(path string, cfg Config) (*Cassette, error) {
	cfg.skipSecretCheck = true
	return Open(path, cfg)
}

// TestSaveRefusesEveryShape: recording a response that carries any of
// these credentials writes nothing and names the line, never the value.
func TestSaveRefusesEveryShape(t *testing.T) {
	// Keys name subtests, and so temporary directories that appear in
	// messages: they must not contain the secrets' words.
	shapes := map[string]string{
		"fine-grained PAT": "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9Wy4Ur6Tn1Oz",
		"JWT":              "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
		"OAuth":            "ya29.a0AfH6SMBx3l4kLmNoPqRsTuVwXyZ0123456789abcdefghij",
		"PEM":              "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\nlWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n-----END RSA PRIVATE KEY-----",
		"AWS":              `aws_secret_access_key = "Zx9Kq2Lm8Np4Rt6Vw1Yb3Dc5Fg7Hj0Ks2Lm4Np6R"`,
		"HF":               "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",
		"Groq":             "gsk_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3bN6mQ1wE4rT7yU0iO5pA2",
		"Stripe":           "sk_live_51H8qZ3wX7eR2tY9uI4oP6aS1dF5gH8jK0lM3nB",
		"URL userinfo":     "postgres://admin:s3cr3tP4ss@db.example.com:5432/x",
		"hex key":          `"x-api-key": "3f9a1c2b7d8e4f60a1b2c3d4e5f60718"`,
	}
	for name, secret := range shapes {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.yaml")
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("config:\n" + secret + "\n")), Request: r}, nil
			})
			c, err := Open(path, Config{Mode: Record, RealTransport: rt})
			require.NoError(t, err)
			readAll(t, do(t, c.Client(), "https://api.example.com", plainReq{method: "POST", path: "/v1/messages", body: `{}`}))
			err = c.Close()
			require.ErrorIs(t, err, errSecret)
			var ce *CassetteError
			require.ErrorAs(t, err, &ce)
			require.Positive(t, ce.Line)
			var core string
			if i := strings.Index(secret, "MIIE"); i >= 0 { // PEM: the key material
				core = secret[i : i+40]
			} else if i := strings.Index(secret, ":s3cr"); i >= 0 { // URL: the password
				core = secret[i+1 : i+11]
			} else {
				core = secret[len(secret)-16:]
			}
			for i := 0; i+6 <= len(core); i++ {
				require.NotContains(t, err.Error(), core[i:i+6])
			}
			_, statErr := os.Stat(path)
			require.ErrorIs(t, statErr, os.ErrNotExist, "nothing written")
		})
	}
}

// TestOpenAndVerifyReportCredentials: a cassette another recorder left
// with a credential header is refused by Open and Verify, naming the file
// and the line, never the value.
func TestOpenAndVerifyReportCredentials(t *testing.T) {
	const key = "3f9a1c2b7d8e4f60a1b2c3d4e5f60718"
	tests := []struct {
		name   string
		header http.Header
	}{
		{"X-Api-Key", http.Header{"X-Api-Key": {key}}},
		{"Authorization", http.Header{"Authorization": {"Bearer " + key}}},
		{"an unknown header named like a key", http.Header{"X-Service-Key": {key}}},
		{"X-Goog-Api-Key", http.Header{"X-Goog-Api-Key": {key}}},
		{"X-Amz-Security-Token", http.Header{"X-Amz-Security-Token": {key}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			staged := stage(t, dir, "s.happy", []plainReq{{method: "POST", path: "/v1/messages", body: `{}`, header: tt.header}})
			raw, err := os.ReadFile(staged)
			require.NoError(t, err)
			line := 0
			for i, l := range strings.Split(string(raw), "\n") {
				if strings.Contains(l, key) {
					line = i + 1
				}
			}
			require.Positive(t, line)
			err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged}}, "")
			require.ErrorIs(t, err, errSecret, "Apply refuses it")
			path := filepath.Join(dir, "s.happy.yaml")
			require.NoError(t, os.WriteFile(path, raw, 0o644))
			// Another recorder's cassette: no manifest.
			_, err = Open(path, Config{})
			require.ErrorIs(t, err, errSecret)
			// Listed in a manifest written by hand, for Verify.
			writeManifestFor(t, dir, "s.happy.yaml")
			_, openErr := Open(path, Config{})
			verifyErr := Verify(dir, VerifyConfig{})
			errs := []error{verifyErr}
			if tt.name != "an unknown header named like a key" {
				// Vouched for by a manifest, Open checks credential headers
				// only; the ruleset is Verify's and Apply's.
				errs = append(errs, openErr)
			}
			for _, err := range errs {
				require.ErrorIs(t, err, errSecret)
				var ce *CassetteError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, path, ce.Path)
				require.Equal(t, line, ce.Line)
				require.NotContains(t, err.Error(), key[:6])
				require.NotContains(t, err.Error(), key[10:16])
			}
		})
	}
}

// writeManifestFor writes a manifest listing file with its current digest,
// whatever it holds.
func writeManifestFor(t testing.TB, dir, file string) {
	t.Helper()
	p, err := readCassette(filepath.Join(dir, file), "")
	require.NoError(t, err)
	m := &manifest.Manifest{Format: manifest.Format}
	require.NoError(t, m.Update(manifest.Entry{File: file, Digest: p.digest.String(), Interactions: len(p.c.Interactions)}, false, "", ""))
	b, err := m.Encode()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.Name), b, 0o644))
}
