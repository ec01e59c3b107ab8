package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
)

// TestRecordSwitch: with -cassettes.record selecting a cassette, the first
// run records it (through a real HTTP server here, inside its bubble, with
// no connection left behind) and is then made again replaying it, like
// every other run; the cassette's digest is pinned alike in every run.
func TestRecordSwitch(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"text":"hi"}`))
	}))
	defer srv.Close()
	redirect, err := cassettes.Redirect("https://api.example.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "greet.yaml")
	recordSwitch(t, `greet\.yaml$`)
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Config{RealTransport: redirect}}
	rep := cfg.check(t, "record", func(ctx context.Context, run *Run) ([]byte, error) {
		c, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		run.Pin("cassette_id", c.Transport.(interface{ CassetteID() string }).CassetteID())
		return postGreet(ctx, c)
	}, false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, []string{path}, rep.Recorded)
	require.Equal(t, int64(1), calls.Load(), "only the first run reached the server")
	id, err := cassettes.Digest(path)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cassette_id": id}, rep.Components)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "https://api.example.com/v1/greet", "the cassette keeps the API's URL")
	require.Contains(t, rep.String(), "recorded "+path+" in run 0")
}

// TestRecordingNotKeptWhenGateFails: a cassette recorded under the record
// switch whose replay gate then does not pass is not kept: the cassette
// recorded before is back byte for byte, and the report says why.
func TestRecordingNotKeptWhenGateFails(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"text":"hi","call":%d}`, calls.Add(1))
	}))
	defer srv.Close()
	redirect, err := cassettes.Redirect("https://api.example.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "unkept.yaml")
	before := recordEarlier(t, path, redirect)

	recordSwitch(t, `unkept\.yaml$`)
	var runs atomic.Int64
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Config{RealTransport: redirect}}
	rep := cfg.check(t, "unkept", func(ctx context.Context, run *Run) ([]byte, error) {
		c, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		out, err := postGreet(ctx, c)
		// A bug: every run's output differs.
		return fmt.Appendf(out, " run %d", runs.Add(1)), err
	}, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Equal(t, []string{path}, rep.Recorded)
	require.Equal(t, int64(2), calls.Load(), "the gate recorded once")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "the earlier cassette is back")
	require.Contains(t, rep.String(), "the recording of "+path+" was not kept: the replay gate that followed it did not pass (NONDETERMINISTIC)")
	requireNoReRecordAdvice(t, rep.String())
}

// TestRecordingNotSavedIsNotClaimed: a recording whose Close refused to
// save it (the transport failed) is not reported as recorded: every run
// replayed the cassette recorded before, the gate passes on it, and the
// report says the recording was not saved, never that every run replayed
// it.
func TestRecordingNotSavedIsNotClaimed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"text":"hi"}`))
	}))
	defer srv.Close()
	redirect, err := cassettes.Redirect("https://api.example.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "refused.yaml")
	before := recordEarlier(t, path, redirect)

	recordSwitch(t, `refused\.yaml$`)
	down := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Config{RealTransport: down}}
	rep := cfg.check(t, "refused", func(ctx context.Context, run *Run) ([]byte, error) {
		c, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		return postGreet(ctx, c)
	}, false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Empty(t, rep.Recorded, "nothing was saved")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "the earlier cassette is as it was")
	text := rep.String()
	require.NotContains(t, text, "every run replayed it", "%s", text)
	require.Contains(t, text, "run 0 recorded "+path+" (the record switch selected it), but the recording was not saved: ")
	require.Contains(t, text, "every run replayed what was there before")
}

// recordEarlier records the greeting into path, the cassette a later
// recording replaces, and returns its bytes.
func recordEarlier(t *testing.T, path string, rt http.RoundTripper) []byte {
	t.Helper()
	earlier, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: closingTransport{next: rt}})
	require.NoError(t, err)
	_, err = postGreet(context.Background(), earlier.Client())
	require.NoError(t, err)
	require.NoError(t, earlier.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	return before
}

// roundTripFunc is an http.RoundTripper from a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// postGreet sends the request the record tests' scenarios make.
func postGreet(ctx context.Context, c *http.Client) ([]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/v1/greet", strings.NewReader(`{"who":"world"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// recordSwitch sets the record switch to pattern for the rest of the test
// (in the test process: a child process gets it from its command line)
// and clears it when the test ends.
func recordSwitch(t *testing.T, pattern string) {
	t.Helper()
	if inChild() {
		return
	}
	require.NoError(t, flag.Set(cassettes.RecordFlag, pattern))
	t.Cleanup(func() { require.NoError(t, flag.Set(cassettes.RecordFlag, "")) })
}

// TestFailedRecordingShowsItsError: a pipeline that fails while it
// records, before sending anything (its SDK's configuration does not
// load), leaves nothing to save; the report leads with that run's own
// error, masked, in report.txt and report.json too, and its next step is
// to fix it, never the record command just run.
func TestFailedRecordingShowsItsError(t *testing.T) {
	const key = "sk-test-recording-key-0123456789abcdef"
	path := filepath.Join(t.TempDir(), "new.yaml")
	recordSwitch(t, `new\.yaml$`)
	cfg := Config{Iterations: 20, Processes: -1, ArtifactDir: t.TempDir(), Cassette: cassettes.Config{APIKey: key, RealTransport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("the API is never reached")
	})}}
	rep := cfg.check(t, "failed-recording", func(ctx context.Context, run *Run) ([]byte, error) {
		if _, err := run.Client(path); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("load config with key %s: unable to add custom RootCAs HTTPClient (AWS_CA_BUNDLE)", key)
	}, false)
	require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
	require.Contains(t, rep.RecordingError, "unable to add custom RootCAs HTTPClient (AWS_CA_BUNDLE)")
	require.NotContains(t, rep.RecordingError, key)
	require.Empty(t, rep.ReRecordCommand, "recording again as before cannot help")
	text := rep.String()
	head, _, _ := strings.Cut(text, "\n\n")
	require.NotContains(t, head, "-cassettes.record", "%s", text)
	require.Contains(t, head, "next: fix what made run 0 fail while recording")
	read := 0
	for _, e := range rep.EvidenceFiles {
		if e.What != "report" && e.What != "report-json" {
			continue
		}
		read++
		b, err := os.ReadFile(e.Path)
		require.NoError(t, err)
		require.Contains(t, string(b), "unable to add custom RootCAs HTTPClient", e.Path)
		require.NotContains(t, string(b), key, e.Path)
	}
	require.Equal(t, 2, read, "report.txt and report.json")
	require.NoFileExists(t, path)
}
