package cassettes

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime/quotedprintable"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// embeddedKey is a GitHub fine-grained token, a shape the rules flag,
// which the cassettes below carry only encoded inside a body's format.
const embeddedKey = "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9Wy4Ur6Tn1Oz"

// chunkMessage is one message of Bedrock InvokeModelWithResponseStream's
// event stream, encoded by the AWS SDK's own encoder: its payload is
// {"bytes": "<base64 of chunk>"}.
func chunkMessage(t testing.TB, chunk string) string {
	t.Helper()
	var h eventstream.Headers
	h.Set(":event-type", eventstream.StringValue("chunk"))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("event"))
	payload := fmt.Sprintf(`{"bytes":%q,"p":"abcdefgh"}`, base64.StdEncoding.EncodeToString([]byte(chunk)))
	var b bytes.Buffer
	require.NoError(t, eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: h, Payload: []byte(payload)}))
	return b.String()
}

// rawMultipart is a multipart/form-data body with boundary "b0undary"
// whose parts are given with their headers.
func rawMultipart(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--b0undary\r\n" + p + "\r\n")
	}
	b.WriteString("--b0undary--\r\n")
	return b.String()
}

// base64Lines is s in base64 with line ends every 76 characters, as MIME
// writes it.
func base64Lines(s string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	return strings.Join(append(lines, enc), "\r\n")
}

// quotedPrintable is s quoted-printable, its lines cut (soft line
// breaks) every 76 characters or less.
func quotedPrintable(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.String()
}

// marshalExchange is the cassette go-vcr writes for one POST with the
// given request and response headers and bodies.
func marshalExchange(t testing.TB, reqH http.Header, reqBody string, respH http.Header, respBody string) string {
	t.Helper()
	c := cassette.New("")
	c.AddInteraction(&cassette.Interaction{
		Request:  cassette.Request{Method: "POST", URL: "https://api.example.com/v1/upload", Body: reqBody, Headers: reqH},
		Response: cassette.Response{Code: 200, Status: "200 OK", Headers: respH, Body: respBody},
	})
	data, err := yaml.Marshal(c)
	require.NoError(t, err)
	return "---\n" + string(data)
}

// TestScanReadsEmbeddedContent: a key the rules flag, carried only as
// base64 content inside a format the cassette understands (the bytes
// member of a Bedrock event-stream chunk, a base64 multipart part, a
// quoted-printable one, a base64 part of a multipart part), makes Open
// refuse the cassette naming the body's line and the kind of secret,
// never the key, in what it decodes nor in its encodings.
func TestScanReadsEmbeddedContent(t *testing.T) {
	jsonH := http.Header{"Content-Type": {"application/json"}}
	formH := http.Header{"Content-Type": {"multipart/form-data; boundary=b0undary"}}
	chunk := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"use ` + embeddedKey + ` here"}}`
	qp := "token: " + strings.Repeat("x", 60) + embeddedKey
	tests := []struct {
		name, text string
		side       string // whose body carries the key
	}{
		{"event-stream bytes", marshalExchange(t, jsonH, `{}`,
			http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
			chunkMessage(t, `{"type":"message_start"}`)+chunkMessage(t, chunk)), "response"},
		{"base64 multipart part", marshalExchange(t, formH, rawMultipart(
			"Content-Disposition: form-data; name=\"purpose\"\r\n\r\nfine-tune",
			"Content-Disposition: form-data; name=\"file\"; filename=\"train.jsonl\"\r\nContent-Type: application/jsonl\r\nContent-Transfer-Encoding: base64\r\n\r\n"+base64Lines(`{"messages":[{"role":"user","content":"`+embeddedKey+`"}]}`)),
			jsonH, `{"id":"file-1"}`), "request"},
		{"quoted-printable multipart part", marshalExchange(t, formH, rawMultipart(
			"Content-Disposition: form-data; name=\"note\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"+quotedPrintable(t, qp)),
			jsonH, `{"id":"file-1"}`), "request"},
		{"base64 part of a nested multipart part", marshalExchange(t, formH, rawMultipart(
			"Content-Disposition: form-data; name=\"files\"\r\nContent-Type: multipart/mixed; boundary=inner\r\n\r\n"+
				"--inner\r\nContent-Transfer-Encoding: base64\r\n\r\n"+base64Lines("key "+embeddedKey)+"\r\n--inner--"),
			jsonH, `{"id":"file-1"}`), "request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.NotContains(t, tt.text, embeddedKey, "the key is not in the text")
			path := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			_, err := Open(path, Config{AllowUnused: true})
			require.ErrorIs(t, err, errSecret)
			var ce *CassetteError
			require.ErrorAs(t, err, &ce)
			// The request's body comes first in go-vcr's layout.
			lines := strings.Split(tt.text, "\n")
			want := 0
			for i, l := range lines {
				if strings.HasPrefix(strings.TrimSpace(l), "body:") {
					want = i + 1
					if tt.side == "request" {
						break
					}
				}
			}
			require.Equal(t, want, ce.Line, "%v", err)
			require.Contains(t, err.Error(), "(rule github-fine-grained-pat")
			require.Contains(t, err.Error(), "an event-stream bytes member or a multipart part")
			requireNoKeyBytes(t, err.Error(), embeddedKey)
			requireNoKeyBytes(t, err.Error(), base64.StdEncoding.EncodeToString([]byte(embeddedKey)))
		})
	}
}

// TestOpenRefusesKeyInEmbeddedContent: the recording key, carried only
// in a Bedrock event-stream chunk's bytes, is refused at every Open, with
// a manifest that vouches for the cassette or without.
func TestOpenRefusesKeyInEmbeddedContent(t *testing.T) {
	dir := t.TempDir()
	text := marshalExchange(t, http.Header{"Content-Type": {"application/json"}}, `{}`,
		http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}}, chunkMessage(t, `{"text":"`+meaningKey+`"}`))
	requireNoKeyBytes(t, text, meaningKey)
	path := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	_, err := Open(path, Config{APIKey: meaningKey, AllowUnused: true})
	require.ErrorIs(t, err, errSecret, "no manifest")
	requireNoKeyBytes(t, err.Error(), meaningKey)
	writeManifestFor(t, dir, "c.yaml")
	_, err = Open(path, Config{APIKey: meaningKey, AllowUnused: true})
	require.ErrorIs(t, err, errSecret, "vouched for by a manifest")
	requireNoKeyBytes(t, err.Error(), meaningKey)
	c, err := Open(path, Config{APIKey: "another-key-entirely", AllowUnused: true})
	require.NoError(t, err, "another key is not in it")
	require.NoError(t, c.Close())
}

// TestEmbeddedContentShareTheDecodingBudget: what a cassette's bodies
// decode to from their Content-Encoding and from the base64 their formats
// carry share one budget; content past it is never read, and the
// cassette is refused as one that cannot be checked, naming the body.
func TestEmbeddedContentShareTheDecodingBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 64 MiB")
	}
	big := marshalExchange(t, http.Header{"Content-Type": {"application/json"}}, `{}`,
		http.Header{"Content-Type": {"application/octet-stream"}, "Content-Encoding": {"gzip"}}, gzipBomb(t, maxDecodedBytes-512))
	small := marshalExchange(t, http.Header{"Content-Type": {"application/json"}}, `{}`,
		http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}}, chunkMessage(t, strings.Repeat("a", 1024)))
	// Two interactions: the first's chunk decodes past what the second's
	// gzip body left, so the check stops before it reads that body.
	text := small + strings.TrimPrefix(big, "---\nversion: 2\ninteractions:\n")
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	_, err := Open(path, Config{AllowUnused: true})
	require.ErrorIs(t, err, errInvalidCassette)
	require.ErrorContains(t, err, "cannot be checked for secrets")
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	lines := strings.Split(text, "\n")
	require.Contains(t, lines[ce.Line-1], "body: !!binary", "the line of the event stream's body: %v", err)
	require.Less(t, ce.Line, strings.Count(small, "\n"), "the first interaction's")
}
