package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// TestRequestsDifferPairsClosest: when one run got through and another
// missed at its first request, the pair shown is the two requests that
// differ least, not the first of the complete run's (an embeddings call
// sorted before the call both runs made), nor one that lacks a whole
// subtree (one differing field, but many differing bytes).
func TestRequestsDifferPairsClosest(t *testing.T) {
	t.Parallel()
	req := func(url, body string) sentRequest {
		return sentRequest{Digest: events.Sum([]byte(url + body)), Method: "POST", URL: url, Body: []byte(body)}
	}
	complete := []sentRequest{
		req("https://api.example/v1/responses", `{"tools":[{"required":["a","b","c"]}]}`),
		req("https://api.example/v1/responses", `{"input":"second","tools":[{"required":["a","b","c"]}]}`),
		req("https://api.example/v1/embeddings", `{"input":["x"]}`),
	}
	missed := []sentRequest{req("https://api.example/v1/responses", `{"tools":[{"required":["c","a","b"]}]}`)}
	// Fewer differing fields than the pair meant (the tools are missing
	// as a whole), but more differing bytes.
	complete = append(complete, req("https://api.example/v1/responses", `{}`))
	for _, order := range [][2][]sentRequest{{complete, missed}, {missed, complete}} {
		x, y, ok := requestsDiffer(order[0], order[1])
		require.True(t, ok)
		require.Equal(t, x.URL, y.URL)
		lines := requestDiff(x, y, "")
		require.NotEmpty(t, lines)
		for _, l := range lines {
			require.Contains(t, l, `body ["tools"][0]["required"]`)
		}
	}
}
