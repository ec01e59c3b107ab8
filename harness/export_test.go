package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

// Test helpers shared with the external test package.
var (
	RecordCassetteForTest = recordCassette
	CompleteForTest       = complete
)

// RaceEnabledForTest reports whether the race detector is on.
func RaceEnabledForTest() bool { return raceEnabled }

// apiURL is the API the test pipelines call (never dialled: a cassette
// serves it).
const apiURL = "https://api.example.test/v1/complete"

// echoAPI answers {"prompt": P} with {"text": "answer to P"}.
type echoAPI struct{}

func (echoAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	var in struct{ Prompt string }
	if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
		return nil, err
	}
	out, _ := json.Marshal(map[string]string{"text": "answer to " + in.Prompt})
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader(out)),
		Request: req,
	}, nil
}

// recordCassette records one request per prompt into dir/name.yaml and
// returns its path.
func recordCassette(t testing.TB, dir, name string, prompts ...string) string {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: echoAPI{}})
	require.NoError(t, err)
	for _, p := range prompts {
		_, err := complete(t.Context(), c.Client(), p)
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	return path
}

// complete asks the API to complete prompt.
func complete(ctx context.Context, client *http.Client, prompt string) (string, error) {
	body, _ := json.Marshal(map[string]string{"prompt": prompt})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ Text string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.Text, nil
}
