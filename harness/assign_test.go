package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
)

// countingAPI answers every request with {"text": "answer N"}, N counting
// from 1: the same request gets a different answer each time.
type countingAPI struct {
	mu sync.Mutex
	n  int
}

func (c *countingAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	_, _ = io.Copy(io.Discard, req.Body)
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader(fmt.Appendf(nil, `{"text":"answer %d"}`, n))),
		Request: req,
	}, nil
}

// twoLanes is a scenario whose lanes a and b each send the same request
// from goroutines of their own, and put the answer they got in the
// output. Which lane's request arrives first alternates between runs.
func twoLanes(path string) Scenario { return twoLanesFrom(path, 0) }

// twoLanesFrom is twoLanes whose run i starts lane names[(i+shift)%2]
// first.
func twoLanesFrom(path string, shift int) Scenario {
	return func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		seq, err := run.Recorder().Emit("job.started", nil)
		if err != nil {
			return nil, err
		}
		f := run.Recorder().Fork(seq)
		names := []string{"a", "b"}
		answers := make([]string, len(names))
		errs := make([]error, len(names))
		for _, name := range names {
			f.Lane(name)
		}
		// The lanes' requests arrive in a run-dependent order, as
		// scheduling would make them arrive: odd runs start lane b first.
		for k := range names {
			i := (k + run.Index() + shift) % len(names)
			lane := f.Lane(names[i])
			var wg sync.WaitGroup
			wg.Go(func() {
				answers[i], errs[i] = complete(lane.Context(ctx), client, "same question")
			})
			wg.Wait()
		}
		if _, err := f.Join(); err != nil {
			return nil, err
		}
		for i, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("lane %s: %w", names[i], err)
			}
		}
		return fmt.Appendf(nil, "a: %s; b: %s", answers[0], answers[1]), nil
	}
}

// TestIdenticalConcurrentRequests: two lanes sending the same request
// at once, with two different answers recorded, get them in arrival
// order: NONDETERMINISTIC, and the report names which lane got which
// interaction in the kept run of each class, child processes included.
func TestIdenticalConcurrentRequests(t *testing.T) {
	t.Parallel()
	path := recordSameTwice(t)
	rep := Config{Iterations: 20, Processes: 2, ArtifactDir: t.TempDir()}.check(t, "identical", twoLanes(path), false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Len(t, rep.Classes, 2, "%s", rep)
	require.Equal(t, []int{10, 10}, []int{rep.Classes[0].Runs, rep.Classes[1].Runs}, "%s", rep)
	d := rep.Divergence
	require.Len(t, d.Assignment, 2, "%s", rep)
	x, y := rep.Classes[0].FirstRun, rep.Classes[1].FirstRun
	for _, l := range d.Assignment {
		require.Regexp(t, `^lane "[ab]" after event 1, its request 0 \(POST https://api.example.test/v1/complete, 2 recorded answers\): interaction [01] \(line \d+\) in run \d+ \(class 1\), interaction [01] \(line \d+\) in run \d+ \(class 2\)$`, l)
		require.Contains(t, l, fmt.Sprintf("in run %d (class 1)", x))
		require.Contains(t, l, fmt.Sprintf("in run %d (class 2)", y))
	}
	require.Contains(t, d.Assignment[0], `lane "a"`)
	require.Contains(t, d.Assignment[1], `lane "b"`)
	// The lanes got different interactions in each class, and each lane
	// got the other one in the other class.
	re := regexp.MustCompile(`interaction (\d) \(line \d+\) in run \d+ \(class 1\), interaction (\d)`)
	a, b := re.FindStringSubmatch(d.Assignment[0]), re.FindStringSubmatch(d.Assignment[1])
	require.NotEqual(t, a[1], b[1], "%q", d.Assignment)
	require.Equal(t, a[1], b[2], "%q", d.Assignment)
	require.Equal(t, a[2], b[1], "%q", d.Assignment)
	text := rep.String()
	require.Contains(t, text, "the outcome depends on the arrival order of identical concurrent requests")
	require.Contains(t, text, "Config.AssignByLane")
	t.Log(text)
}

// TestIdenticalConcurrentRequestsByLane: the same scenario with
// Config.AssignByLane passes, in the test process and in child processes.
func TestIdenticalConcurrentRequestsByLane(t *testing.T) {
	t.Parallel()
	path := recordSameTwice(t)
	rep := Config{Iterations: 20, Processes: 2, ArtifactDir: t.TempDir(), AssignByLane: true}.check(t, "identical-by-lane", twoLanes(path), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, 2, rep.ProcessRuns)
}

// recordSameTwice records the same request twice from countingAPI, so
// two interactions with different answers match it, and returns the
// cassette's path.
func recordSameTwice(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "same.yaml")
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: &countingAPI{}})
	require.NoError(t, err)
	for range 2 {
		_, err := complete(t.Context(), c.Client(), "same question")
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	return path
}

// TestAssignmentDiff: only requests sent from a lane and answered
// differently in different classes are listed, ordered by lane and order
// whatever order the runs sent them in, with the API key masked in the
// URL, and at most maxRequestDiff of them.
func TestAssignmentDiff(t *testing.T) {
	t.Parallel()
	key := "sk-ant-api03-" + strings.Repeat("K", 40)
	req := func(lane string, order, interaction int) sentRequest {
		return sentRequest{Method: "POST", URL: "https://api.example.test/v1?key=" + key, Lane: lane, LaneOrder: order, Identical: 3, Interaction: interaction, Line: 10 * (interaction + 1)}
	}
	class := func(run int, reqs ...sentRequest) *group {
		return &group{first: &outcome{iter: run, requests: reqs}}
	}
	a, b := `"a" after event 1`, `"b" after event 1`
	got := assignmentDiff([]*group{
		class(0, req(b, 0, 0), req("", 0, 2), req(a, 0, 1), req(a, 1, 2)),
		{}, // a class that kept no run
		class(7, req(a, 0, 0), req(a, 1, 2), req("", 0, 1), req(b, 0, 1)),
	}, key)
	require.Equal(t, []string{
		`lane "a" after event 1, its request 0 (POST https://api.example.test/v1?key=REDACTED, 3 recorded answers): interaction 1 (line 20) in run 0 (class 1), interaction 0 (line 10) in run 7 (class 3)`,
		`lane "b" after event 1, its request 0 (POST https://api.example.test/v1?key=REDACTED, 3 recorded answers): interaction 0 (line 10) in run 0 (class 1), interaction 1 (line 20) in run 7 (class 3)`,
	}, got)
	require.Nil(t, assignmentDiff([]*group{class(0, req(a, 0, 1)), class(1, req(a, 0, 1))}, key), "the same assignment in both classes")

	var x, y []sentRequest
	for n := range maxRequestDiff + 3 {
		x, y = append(x, req(a, n, 0)), append(y, req(a, n, 1))
	}
	got = assignmentDiff([]*group{class(0, x...), class(1, y...)}, key)
	require.Len(t, got, maxRequestDiff+1)
	require.Equal(t, "... and 3 more requests", got[maxRequestDiff])
}

// TestIdenticalRequestsRecordedByLane: under the record switch, run 0
// records the two lanes' identical requests live (lane b's first), the
// cassette notes each one's lane and keeps them ordered by lane, and with
// AssignByLane every replaying run gives each lane the answer recorded
// from it: the answers run 0 got live.
func TestIdenticalRequestsRecordedByLane(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lanes.yaml")
	recordSwitch(t, `lanes\.yaml$`)
	cfg := Config{Iterations: 20, Processes: -1, AssignByLane: true, Cassette: cassettes.Config{RealTransport: &countingAPI{}}}
	rep := cfg.check(t, "lanes", twoLanesFrom(path, 1), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, []string{path}, rep.Recorded)
	require.Equal(t, events.Sum([]byte("a: answer 2; b: answer 1")).String(), rep.OutputDigest, "%s", rep)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Regexp(t, `(?s)Codegenie-Lane:\s+- 1 "a".*answer 2.*Codegenie-Lane:\s+- 1 "b".*answer 1`, string(b))
}
