package sdkgate

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// fakeAPIServer starts internal/fakellm on loopback, closed when the test
// ends (its client's idle connections with it).
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv, _ := fakellm.NewHTTPTest(t, fakellm.Config{ChunkSize: 7})
	return srv
}

// fakeAPIPipeline is a pipeline under test: it talks to an API through
// hc and records its steps in run's recorder when run is non-nil (nil
// while recording).
type fakeAPIPipeline func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error)

// fakeAPIRecord records the cassette at path the way a user does, with
// the cassettes package's test flag -cassettes.record selecting it, the
// requests sent through rt (a redirect to the fake, or a transport to it),
// and returns the pipeline's output. Every process of the test records
// its own copy: child processes of harness.Check rerun the test, and
// t.TempDir differs in each.
func fakeAPIRecord(t *testing.T, path string, rt http.RoundTripper, p fakeAPIPipeline) []byte {
	t.Helper()
	f := flag.Lookup(cassettes.RecordFlag)
	require.NotNil(t, f, "the cassettes package registers its record flag in test binaries")
	prev := f.Value.String()
	require.NoError(t, flag.Set(cassettes.RecordFlag, regexp.QuoteMeta(filepath.Base(path))+"$"))
	defer func() { require.NoError(t, flag.Set(cassettes.RecordFlag, prev)) }()
	c, err := cassettes.Open(path, cassettes.Config{RealTransport: rt})
	require.NoError(t, err)
	out, err := p(t.Context(), c.Client(), nil)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	return out
}

// fakeAPIRecordRedirected records p into file in a new temporary
// directory, its requests for the API at root (e.g.
// "https://api.openai.com") sent to a new fake, so the cassette keeps the
// API's URL; it returns the cassette's path and p's output, after checking
// that the output holds each of want.
func fakeAPIRecordRedirected(t *testing.T, root, file string, p fakeAPIPipeline, want ...string) (string, []byte) {
	t.Helper()
	srv := fakeAPIServer(t)
	rt, err := cassettes.Redirect(root, srv.URL, srv.Client().Transport)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), file)
	out := fakeAPIRecord(t, path, rt, p)
	for _, s := range want {
		require.Contains(t, string(out), s)
	}
	return path, out
}

// fakeAPIScenario replays the cassette at path for each run.
func fakeAPIScenario(path string, p fakeAPIPipeline) harness.Scenario {
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		hc, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		return p(ctx, hc, run)
	}
}

// fakeAPIGate gates p over the cassette at path with the zero Config: 50
// runs, 4 in perturbed child processes, which hold the SDK's variables
// held (all read) as configuration. In a child process Check makes its
// one run and ends the test there.
func fakeAPIGate(t *testing.T, name, path string, p fakeAPIPipeline, want []byte, held ...string) {
	t.Helper()
	rep := harness.Check(t, name, fakeAPIScenario(path, p))
	require.NotNil(t, rep)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, 50, rep.Runs, "the zero Config makes 50 runs")
	require.Equal(t, 4, rep.ProcessRuns, "the zero Config makes 4 runs in child processes")
	require.Len(t, rep.Classes, 1)
	require.Equal(t, events.Sum(want).String(), rep.OutputDigest, "the replays give what the recording gave")
	require.NotNil(t, rep.Processes)
	require.Subset(t, rep.Processes.EnvHeld, held, "not varied: configuration")
}

// fakeAPIMapOrder gates buggy, a pipeline that builds part of its request
// by ranging over a map, over the cassette recorded by the correct one:
// the verdict is NONDETERMINISTIC, the request is blamed and field is the
// first location of the request diff; nothing suggests re-recording.
func fakeAPIMapOrder(t *testing.T, name, path string, buggy fakeAPIPipeline, field string) {
	t.Helper()
	rep, err := harness.Config{Iterations: 20, Floor: 20, ArtifactDir: t.TempDir()}.Iterate(t.Context(), name, fakeAPIScenario(path, buggy))
	require.ErrorIs(t, err, harness.ErrNondeterministic, "%s", rep)
	require.Equal(t, gate.Nondeterministic, rep.Verdict)
	require.NotNil(t, rep.Divergence)
	require.True(t, rep.Divergence.RequestVaries, "%s", rep)
	require.NotEmpty(t, rep.Divergence.RequestDiff)
	for _, l := range rep.Divergence.RequestDiff {
		require.True(t, strings.HasPrefix(l, "body "+field), "every differing location is under %s: %q\n%s", field, l, rep)
	}
	text := rep.String()
	require.Contains(t, text, "the request itself varies between runs")
	require.Empty(t, rep.ReRecordCommand)
	require.NotContains(t, text, "-cassettes.record")
}

// weatherSchema is the JSON schema of the weather tool the pipelines
// offer: its properties and its required list. With mapBug the required
// list is built by ranging over the properties map, whose order Go varies
// from run to run: the bug the gate must name.
func weatherSchema(mapBug bool) (props map[string]any, required []string) {
	props = map[string]any{
		"city":    map[string]any{"type": "string", "description": "City name"},
		"country": map[string]any{"type": "string", "description": "ISO 3166 country code"},
		"days":    map[string]any{"type": "integer", "description": "Days to forecast"},
		"hourly":  map[string]any{"type": "boolean", "description": "Hourly detail"},
		"units":   map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
	}
	if !mapBug {
		return props, []string{"city", "country", "days", "hourly", "units"}
	}
	for name := range props {
		required = append(required, name)
	}
	return props, required
}

// requireFolded requires the review of the cassette at path (every
// interaction new) to fold each answer as its API's SDK reads it: calls
// counts the interactions of each API; every error names its message;
// every successful answer has a model and, but an embedding, text or a
// tool call (tools of them in all), an embedding its input tokens; every
// stream says when its frames arrived.
func requireFolded(t *testing.T, path string, calls map[string]int, tools int) {
	t.Helper()
	rev, err := review.Compare(t.Context(), t.TempDir(), filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, rev.Cassettes, 1)
	got := map[string]int{}
	called := 0
	for _, in := range rev.Cassettes[0].Interactions {
		m := in.After
		require.NotNil(t, m)
		got[m.API]++
		called += len(m.ToolCalls)
		if m.Status >= 400 {
			require.NotEmpty(t, m.ErrorMessage, "%s %s: %+v", in.Method, in.URL, m)
			continue
		}
		require.NotEmpty(t, m.Model, "%s %s", in.Method, in.URL)
		switch {
		case m.API != "ollama-embed":
			require.True(t, m.Text != "" || len(m.ToolCalls) > 0, "%s %s folds to nothing: %+v", in.Method, in.URL, m)
		default:
			require.NotZero(t, m.Usage.Input, "%s %s: %+v", in.Method, in.URL, m)
		}
		if m.Streamed {
			require.Positive(t, m.Frames)
			require.NotNil(t, m.Timing, "%s %s: the recording notes when its frames arrived", in.Method, in.URL)
		}
	}
	require.Equal(t, calls, got)
	require.Equal(t, tools, called)
}
