package cassettes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/assign"
	"github.com/stretchr/testify/require"
)

// sendAssigned sends r through c with ctx carrying a fresh
// assign.Request (byLane as given) and returns it once the response is
// read, with the response body.
func sendAssigned(t *testing.T, ctx context.Context, c *Cassette, base string, r plainReq, byLane bool) (*assign.Request, string) {
	t.Helper()
	ar := &assign.Request{ByLane: byLane}
	req, err := http.NewRequestWithContext(assign.WithRequest(ctx, ar), r.method, base+r.path, strings.NewReader(r.body))
	require.NoError(t, err)
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	return ar, readAll(t, resp)
}

// TestAssignmentLog: a request whose context carries an assign.Request
// learns how many recorded interactions matched it and which one (and
// its line) answered it; a request that matches one interaction only
// says so too, and one without an assign.Request is served as ever.
func TestAssignmentLog(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/p", body: `{"same":true}`}
	other := plainReq{method: "POST", path: "/q", body: `{}`}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{other, r, r, r})
	c, err := Open(path, Config{})
	require.NoError(t, err)
	ctx := t.Context()
	var lines []int
	for want := 1; want <= 2; want++ {
		ar, body := sendAssigned(t, ctx, c, srv.URL, r, false)
		require.Equal(t, 3, ar.Candidates)
		require.Equal(t, want, ar.Interaction, "file order among identical requests")
		require.Equal(t, c.p.lines[want], ar.Line)
		require.Contains(t, body, fmt.Sprintf(`"n":%d`, want+1), "the interaction named is the one served")
		lines = append(lines, ar.Line)
	}
	require.Less(t, lines[0], lines[1])
	ar, _ := sendAssigned(t, ctx, c, srv.URL, other, false)
	require.Equal(t, assign.Request{Candidates: 1, Interaction: 0, Line: c.p.lines[0]}, *ar)
	require.Contains(t, readAll(t, do(t, c.Client(), srv.URL, r)), `"n":4`, "no assign.Request: served as ever")
	require.NoError(t, c.Close())
}

// TestAssignByLane: identical requests sent from the lanes of one fork,
// with the assignment by lane asked for, get the same interaction
// whatever order they arrive in: the lane of rank r (by name) among f
// lanes gets, for its n-th such request, position b + n*f + r, b being
// what was served before the fork's first such request. Without it the
// first to arrive gets the first.
func TestAssignByLane(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/p", body: `{"same":true}`}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{r, r, r, r, r, r, r})
	type sent struct {
		lane string // "" for the main lane
		want int    // interaction expected by lane
	}
	for _, order := range [][]sent{
		{{"", 0}, {"a", 1}, {"b", 2}, {"c", 3}, {"a", 4}, {"b", 5}, {"c", 6}},
		{{"", 0}, {"c", 3}, {"b", 2}, {"a", 1}, {"c", 6}, {"a", 4}, {"b", 5}},
		{{"", 0}, {"b", 2}, {"c", 3}, {"b", 5}, {"a", 1}, {"c", 6}, {"a", 4}},
	} {
		for _, byLane := range []bool{true, false} {
			c, err := Open(path, Config{})
			require.NoError(t, err)
			rec := events.NewRecorder(events.Config{})
			seq, err := rec.Emit("start", nil)
			require.NoError(t, err)
			f := rec.Fork(seq)
			for _, name := range []string{"c", "a", "b"} {
				f.Lane(name)
			}
			var got []string
			for k, s := range order {
				ctx := t.Context()
				if s.lane != "" {
					ctx = f.Lane(s.lane).Context(ctx)
				}
				ar, body := sendAssigned(t, ctx, c, srv.URL, r, byLane)
				want := s.want
				if !byLane {
					want = k // arrival order
				}
				require.Equal(t, want, ar.Interaction, "lane %q, request %d of %v, by lane %v", s.lane, k, order, byLane)
				require.Contains(t, body, fmt.Sprintf(`"n":%d`, want+1))
				got = append(got, fmt.Sprint(s.lane, ar.Interaction))
			}
			require.NoError(t, c.Close(), "every interaction served once: %v", got)
		}
	}
}

// TestRecordedLanes: a recording notes the lane each request was sent
// from (never sending the note to the API) and keeps identical requests
// ordered by lane, whatever order they arrived in; replayed with the
// assignment by lane, each lane's n-th request gets the n-th interaction
// recorded from that lane, whatever order the requests arrive in and
// whenever the lanes were taken.
func TestRecordedLanes(t *testing.T) {
	var mu sync.Mutex
	n, leaked := 0, 0
	var errs []error // guarded by mu
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		if r.Header.Get(laneHeader) != "" {
			leaked++
		}
		fmt.Fprintf(w, `{"n":%d}`, n)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r := plainReq{method: "POST", path: "/p", body: `{"same":true}`}
	names := []string{"c", "a", "b"}
	path := filepath.Join(t.TempDir(), "lanes.yaml")
	// sendAll sends r twice from each lane, the lanes at once, and
	// returns what each lane got, by lane name.
	sendAll := func(c *Cassette, byLane bool) map[string][]*assign.Request {
		rec := events.NewRecorder(events.Config{})
		f := rec.Fork(0)
		got := map[string][]*assign.Request{}
		var wg sync.WaitGroup
		for _, name := range names {
			wg.Go(func() {
				ctx := f.Lane(name).Context(t.Context())
				for range 2 {
					ar := &assign.Request{ByLane: byLane}
					req, err := http.NewRequestWithContext(assign.WithRequest(ctx, ar), r.method, srv.URL+r.path, strings.NewReader(r.body))
					if err == nil {
						var resp *http.Response
						if resp, err = c.Client().Do(req); err == nil {
							_, err = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
					mu.Lock()
					errs = append(errs, err)
					got[name] = append(got[name], ar)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		return got
	}
	c, err := Open(path, Config{Mode: Record})
	require.NoError(t, err)
	sendAll(c, false)
	require.NoError(t, c.Close())
	require.Zero(t, leaked, "the lane is not sent to the API")
	rc, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	var lanes []string
	for i := range rc.Interactions() {
		lanes = append(lanes, rc.recordedLane(i))
	}
	require.Equal(t, []string{`0 "a"`, `0 "a"`, `0 "b"`, `0 "b"`, `0 "c"`, `0 "c"`}, lanes, "ordered by lane")
	require.NoError(t, rc.Close())

	for range 20 {
		c, err := Open(path, Config{})
		require.NoError(t, err)
		got := sendAll(c, true)
		require.NoError(t, c.Close())
		for k, name := range []string{"a", "b", "c"} {
			for m, ar := range got[name] {
				require.Equal(t, 2*k+m, ar.Interaction, "lane %s request %d", name, m)
				require.Equal(t, 6, ar.Candidates)
			}
		}
	}
}
