package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Credentials of every shape the cassettes package must refuse, each in a
// context it could appear in (a JSON body, a header line, a URL).
var caught = []struct {
	name, text, secret string
}{
	{"github fine-grained PAT", `{"token":"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9Wy4Ur6Tn1Oz"}`,
		"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9Wy4Ur6Tn1Oz"},
	{"JWT", "Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n",
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
	{"Google OAuth token", `{"access":"ya29.a0AfH6SMBx3l4kLmNoPqRsTuVwXyZ0123456789abcdefghij"}`, "ya29.a0AfH6SMBx3l4kLmNoPqRsTuVwXyZ0123456789abcdefghij"},
	{"PEM private key", "key: |\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\nlWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n-----END RSA PRIVATE KEY-----\n", "MIIEpAIBAAKCAQEA"},
	{"AWS secret key", `{"aws_secret_access_key":"Zx9Kq2Lm8Np4Rt6Vw1Yb3Dc5Fg7Hj0Ks2Lm4Np6R"}`, "Zx9Kq2Lm8Np4Rt6Vw1Yb3Dc5Fg7Hj0Ks2Lm4Np6R"},
	{"AWS secret key in env style", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYzQ1t2u3v4w5x\n", "wJalrXUtnFEMIK7MDENGbPxRfiCYzQ1t2u3v4w5x"},
	{"Hugging Face token", `{"hf":"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"}`, "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"},
	{"Groq key", `{"k":"gsk_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3bN6mQ1wE4rT7yU0iO5pA2"}`, "gsk_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3bN6mQ1wE4rT7yU0iO5pA2"},
	{"Stripe live key", `{"k":"sk_live_51H8qZ3wX7eR2tY9uI4oP6aS1dF5gH8jK0lM3nB"}`, "sk_live_51H8qZ3wX7eR2tY9uI4oP6aS1dF5gH8jK0lM3nB"},
	{"password in a URL", `{"db":"postgres://admin:s3cr3tP4ss@db.example.com:5432/x"}`, "s3cr3tP4ss"},
	{"32-hex x-api-key", `{"x-api-key":"3f9a1c2b7d8e4f60a1b2c3d4e5f60718"}`, "3f9a1c2b7d8e4f60a1b2c3d4e5f60718"},
	{"32-hex x-api-key header line", "X-Api-Key: 3f9a1c2b7d8e4f60a1b2c3d4e5f60718\n", "3f9a1c2b7d8e4f60a1b2c3d4e5f60718"},
	{"Anthropic key", `{"k":"sk-ant-api03-Q8wE3rT6yU1iO9pA4sD7fG2h"}`, "sk-ant-api03-Q8wE3rT6yU1iO9pA4sD7fG2h"},
	{"OpenAI key", `{"k":"sk-proj-Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3bN6mQ1"}`, "sk-proj-Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3bN6mQ1"},
	{"AWS access key id", "id AKIAIOSFODNN7Q2RT5VA here", "AKIAIOSFODNN7Q2RT5VA"},
	{"credential in a URL query", "GET https://h/p?b=2&access_token=opaque0123456789xyz", "opaque0123456789xyz"},
	{"bearer token", "Authorization: Bearer Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL\n", "Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL"},
	{"GitHub classic token", `{"t":"ghp_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3b"}`, "ghp_Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8cV3b"},
	{"Slack bot token", `{"t":"xoxb-123456789012-1234567890123-Q8wE3rT6yU1iO9pA4sD7fG2h"}`, "xoxb-123456789012-1234567890123-Q8wE3rT6yU1iO9pA4sD7fG2h"},
}

func TestScanCatches(t *testing.T) {
	t.Parallel()
	for _, tt := range caught {
		t.Run(tt.name, func(t *testing.T) {
			fs := Scan(tt.text)
			require.NotEmpty(t, fs, "nothing found in %q", tt.text)
			covered := false
			for _, f := range fs {
				require.LessOrEqual(t, 0, f.Start)
				require.LessOrEqual(t, f.End, len(tt.text))
				if strings.Contains(tt.text[f.Start:f.End], tt.secret) || strings.Contains(tt.secret, tt.text[f.Start:f.End]) {
					covered = true
				}
			}
			require.True(t, covered, "findings %+v do not cover %q", fs, tt.secret)
			masked := Mask(tt.text, "REDACTED")
			require.NotContains(t, masked, tt.secret)
			require.Contains(t, masked, "REDACTED")
		})
	}
}

func TestScanLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		`{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"fix lodash"}]}`,
		"X-Api-Key: REDACTED\nAuthorization: REDACTED\n",
		"https://api.anthropic.com/v1/messages?beta=true",
		"https://h/p?key=REDACTED&page_token=abcdefgh12345678&token=short",
		`{"id":"msg_fake_aac716c8f71892a3a359a455","type":"message"}`,
		"diff --git a/go.mod b/go.mod\n-\tgolang.org/x/net v0.17.0\n+\tgolang.org/x/net v0.23.0\n",
		"git@github.com:org/repo.git and https://user@example.com/",
	} {
		require.Empty(t, Scan(text), "%q", text)
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
		literals         []string
	}{
		{"literal anywhere", "a my-long-key b my-long-key", "a X b X", []string{"my-long-key"}},
		{"short literal ignored", "a key b", "a key b", []string{"key"}},
		{"overlapping literal and finding", "k=sk-ant-api03-Q8wE3rT6yU1iO9pA4sD7fG2h!", "k=X!", []string{"api03-Q8wE3rT6"}},
		{"at the start", "sk-ant-api03-Q8wE3rT6yU1iO9pA4sD7fG2h rest", "X rest", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Mask(tt.text, "X", tt.literals...))
		})
	}
}

func TestRulesLoad(t *testing.T) {
	t.Parallel()
	rs := Rules()
	var gl, ours int
	for _, r := range rs {
		switch r.Source {
		case "gitleaks":
			gl++
		case "codegenie":
			ours++
		}
	}
	require.Greater(t, gl, 200, "the gitleaks ruleset is in force")
	require.Equal(t, len(extraRules), ours)
}

func FuzzScanMask(f *testing.F) {
	for _, c := range caught {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, fd := range Scan(text) {
			if fd.Start < 0 || fd.End > len(text) || fd.Start > fd.End {
				t.Fatalf("finding %+v out of range of %d bytes", fd, len(text))
			}
		}
		masked := Mask(text, "REDACTED")
		if again := Mask(masked, "REDACTED"); again != masked {
			t.Fatalf("masking twice differs: %q then %q", masked, again)
		}
	})
}

// BenchmarkScan scans a committed cassette (about 11 KB of prompts, diffs
// and headers, where "token", "key" and "api" occur throughout).
func BenchmarkScan(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "go-xnet.happy.yaml"))
	require.NoError(b, err)
	text := string(raw)
	Scan(text) // load the rules
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if len(Scan(text)) != 0 {
			b.Fatal("a committed cassette holds a secret")
		}
	}
}

// BenchmarkScanDenseKeywords scans text made to be costly: keywords of the
// generic rules every few bytes, each followed by an assignment, so that
// every window holds a possible start and no match ever ends.
func BenchmarkScanDenseKeywords(b *testing.B) {
	text := strings.Repeat("key=token=password=x,secret ", 1<<18/28)
	Scan(text) // load the rules
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Scan(text)
	}
}

// TestWindowedScanFindsLongMatches: a match longer than the window around
// its keyword is found whole.
func TestWindowedScanFindsLongMatches(t *testing.T) {
	t.Parallel()
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n", 20) + "-----END RSA PRIVATE KEY-----"
	text := strings.Repeat("x", 1000) + key + strings.Repeat("y", 1000)
	fs := Scan(text)
	require.NotEmpty(t, fs)
	require.Equal(t, 1000, fs[0].Start)
	require.Equal(t, 1000+len(key), fs[0].End)
	require.Equal(t, strings.Repeat("x", 1000)+"R"+strings.Repeat("y", 1000), Mask(text, "R"))
}

// FuzzWindowedScan: scanning around keywords finds what scanning the whole
// text finds.
func FuzzWindowedScan(f *testing.F) {
	for _, c := range caught {
		f.Add(c.text)
		f.Add("prefix " + c.text + strings.Repeat(" padding", 100) + c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		require.Equal(t, scan(text, false), scan(text, true))
	})
}

func TestWindowedScanOnCommittedCassettes(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		text := string(raw) + "\n" + caught[0].text + "\n" + string(raw)
		require.Equal(t, scan(text, false), scan(text, true), f)
	}
}

// Findings are in a total order: rules that match the same bytes come out
// by rule id, whatever order the sort algorithm leaves ties in.
func TestScanOrdersTiesByRule(t *testing.T) {
	t.Parallel()
	var text strings.Builder
	for range 3 {
		for _, c := range caught {
			text.WriteString(c.text + "\n")
		}
	}
	fs := Scan(text.String())
	ties := 0
	for i := 1; i < len(fs); i++ {
		a, b := fs[i-1], fs[i]
		require.LessOrEqual(t, a.Start, b.Start)
		if a.Start == b.Start && a.End == b.End {
			ties++
			require.Less(t, a.Rule, b.Rule, "findings %d and %d cover the same bytes", i-1, i)
		}
	}
	require.Positive(t, ties, "the text holds no secret two rules find")
}
