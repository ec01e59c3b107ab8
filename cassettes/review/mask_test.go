package review_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"

	"github.com/codegenie/codegenie/cassettes/review"
)

// reviewKey is a recording key no secret rule recognises.
const reviewKey = "zq7-Wv3-Kp9-Ld2-Rt5-Mx8-Hb4-Nc6"

// jsonEscaped writes s as JSON string content, every byte \u-escaped.
func jsonEscaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// writeKeyCassette writes a cassette whose every part a review shows holds
// the key: the URL, the request body, the model, the answer (whole, split
// across stream deltas, JSON-escaped), a tool call and an error.
func writeKeyCassette(t *testing.T, path, variant string) {
	t.Helper()
	half := len(reviewKey) / 2
	c := cassette.New("")
	add := func(u, reqBody, ct, respBody string, code int) {
		c.AddInteraction(&cassette.Interaction{
			Request: cassette.Request{Method: "POST", URL: u, Body: reqBody,
				Headers: http.Header{"Content-Type": {"application/json"}}},
			Response: cassette.Response{Code: code, Status: http.StatusText(code), Body: respBody,
				Headers: http.Header{"Content-Type": {ct}}},
		})
	}
	msgs := "https://api.anthropic.com/v1/messages?x=" + url.QueryEscape(reviewKey)
	add(msgs, `{"model":"m-`+reviewKey+`","messages":[{"role":"user","content":"`+variant+` `+reviewKey+`"}]}`, "application/json",
		`{"type":"message","model":"m-`+reviewKey+`","content":[{"type":"text","text":"`+variant+` answer `+reviewKey+`"},`+
			`{"type":"tool_use","id":"t-`+reviewKey+`","name":"n-`+reviewKey+`","input":{"k":"`+variant+reviewKey+`"}}],"stop_reason":"`+reviewKey+`"}`, 200)
	add(msgs+"&stream=1", `{"stream":true,"v":"`+variant+`"}`, "text/event-stream",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+variant+" "+reviewKey[:half]+"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+reviewKey[half:]+" and "+jsonEscaped(reviewKey)+"\"}}\n\n", 200)
	add(msgs+"&e=1", `{"e":"`+variant+`"}`, "application/json",
		`{"type":"error","error":{"type":"`+variant+jsonEscaped(reviewKey)+`","message":"`+variant+" "+jsonEscaped(reviewKey)+`"}}`, 500)
	data, err := yaml.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append([]byte("---\n"), data...), 0o644))
}

// TestReviewMasksRecordingKey: with Config.APIKey, neither form of a review
// holds 8 consecutive bytes of the key, wherever the cassettes held it.
func TestReviewMasksRecordingKey(t *testing.T) {
	dir, stage := t.TempDir(), t.TempDir()
	writeKeyCassette(t, filepath.Join(dir, "k.yaml"), "old")
	writeKeyCassette(t, filepath.Join(stage, "k.yaml"), "new")
	rev, err := review.Config{APIKey: reviewKey}.Compare(context.Background(), dir, stage)
	require.NoError(t, err)
	var md, js bytes.Buffer
	require.NoError(t, rev.Markdown(&md))
	require.NoError(t, rev.WriteJSON(&js))
	require.Contains(t, md.String(), "REDACTED")
	for _, out := range []string{md.String(), js.String()} {
		for i := 0; i+8 <= len(reviewKey); i++ {
			require.NotContains(t, out, reviewKey[i:i+8], "bytes of the key at %d reached the review:\n%s", i, out)
		}
	}
}
