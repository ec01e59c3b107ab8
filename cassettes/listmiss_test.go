package cassettes

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/refreshenv"
)

// listed decodes each line of the listing file list as a T.
func listed[T any](t testing.TB, list string) []T {
	t.Helper()
	f, err := os.Open(list)
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestRefreshListsMisses: in a test binary a refresh runs with a listing
// file, every miss appends a line with the cassette's absolute path and,
// for a request that differs from its recording only in the API version
// its SDK sends, that change; a request changed otherwise has none. A
// line already written is not written again.
func TestRefreshListsMisses(t *testing.T) {
	root := t.TempDir()
	list := filepath.Join(t.TempDir(), "list.jsonl")
	withRefreshRun(t, &refreshHooks{list: list, root: root})
	srv := echoServer(t)
	v1 := http.Header{"Anthropic-Version": {"2023-06-01"}, "Content-Type": {"application/json"}}
	v2 := http.Header{"Anthropic-Version": {"2026-10-21"}, "Content-Type": {"application/json"}}
	path := recordPlain(t, root, "version", srv, []plainReq{
		{method: "POST", path: "/v1/messages", body: `{"n":1}`, header: v1},
		{method: "POST", path: "/v1/messages", body: `{"n":2}`, header: v1},
	})
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	for _, r := range []plainReq{
		{method: "POST", path: "/v1/messages", body: `{"n":1}`, header: v2},
		{method: "POST", path: "/v1/messages", body: `{"n":3}`, header: v2},
		{method: "POST", path: "/v1/messages", body: `{"n":2}`, header: v2},
		{method: "POST", path: "/v1/messages", body: `{"n":4}`, header: v2},
	} {
		missOf(t, c, srv.URL, r)
	}
	require.NoError(t, c.Close())

	var got []refreshenv.Missed
	for _, m := range listed[refreshenv.Missed](t, list) {
		if m.Missed != "" {
			got = append(got, m)
		}
	}
	require.Equal(t, []refreshenv.Missed{
		{Missed: path, VersionChange: `header Anthropic-Version "2023-06-01" != "2026-10-21"`},
		{Missed: path},
	}, got)
}
