package cassettes_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/stretchr/testify/require"
)

const converseURL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/converse"

// signedRequest is a Bedrock Converse request as the AWS SDK sends it:
// every SigV4 header and the SDK's invocation id and attempt counter
// differ from call to call; n varies them.
func signedRequest(t *testing.T, body, n string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, converseURL, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Date", "20261127T1200"+n+"Z")
	req.Header.Set("X-Amz-Security-Token", "session-token-"+n)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req.Header.Set("Amz-Sdk-Invocation-Id", "invocation-"+n)
	req.Header.Set("Amz-Sdk-Request", "attempt=1; max=3")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20261127/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=sig"+n)
	return req
}

// TestSignedRequestsMatchByMeaning records a SigV4-signed request and
// replays it with every signature header different: it matches; a changed
// body field still misses; a body that does not match its signed hash is
// refused; and no signature or session token is saved.
func TestSignedRequestsMatchByMeaning(t *testing.T) {
	const body = `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"temperature":0}}`
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"hello"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`)
	}))
	defer fake.Close()
	rt, err := cassettes.Redirect("https://bedrock-runtime.us-east-1.amazonaws.com", fake.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "bedrock.yaml")
	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: rt})
	require.NoError(t, err)
	resp, err := rec.Client().Do(signedRequest(t, body, "01"))
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, rec.Close())

	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, s := range []string{"session-token-01", "sig01", "invocation-01", "20261127T120001Z", "X-Amz-Content-Sha256"} {
		require.NotContains(t, string(saved), s)
	}

	c, err := cassettes.Open(path, cassettes.Config{AllowUnused: true})
	require.NoError(t, err)
	defer c.Close()
	resp, err = c.Client().Do(signedRequest(t, body, "02"))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(got), `"stopReason":"end_turn"`)

	changed := bytes.Replace([]byte(body), []byte(`"temperature":0`), []byte(`"temperature":1`), 1)
	_, err = c.Client().Do(signedRequest(t, string(changed), "03"))
	require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)

	tampered := signedRequest(t, body, "04")
	tampered.Body = io.NopCloser(bytes.NewReader(changed))
	tampered.ContentLength = int64(len(changed))
	_, err = c.Client().Do(tampered)
	require.ErrorContains(t, err, "changed after it was signed")
}
