package cassettes

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// noNetwork fails every request as a machine without the API would.
var noNetwork = roundTripFunc(func(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: lookup api.anthropic.com: no such host")
})

// TestSecondTestReplaysTheFirstRecording: two tests of one process open
// the same cassette under the record switch; the first records it, the
// second (whose transport cannot reach anything) replays that recording,
// and the file stays byte for byte what the first recorded.
func TestSecondTestReplaysTheFirstRecording(t *testing.T) {
	srv := echoServer(t)
	path := filepath.Join(t.TempDir(), "shared.yaml")
	withFlags(t, `shared\.yaml$`, false)
	var first []byte
	t.Run("A", func(t *testing.T) {
		c := OpenT(t, path, Config{RealTransport: srv.Client().Transport})
		require.Equal(t, Record, c.Mode())
		readAll(t, do(t, c.Client(), srv.URL, reqA))
	})
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	t.Run("B", func(t *testing.T) {
		c := OpenT(t, path, Config{RealTransport: noNetwork})
		require.Equal(t, Replay, c.Mode())
		require.Contains(t, readAll(t, do(t, c.Client(), srv.URL, reqA)), `"n":1`)
	})
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(first), string(after))
}

// TestWhileRecordingASecondOpeningFails: while one test records a cassette
// under the record switch, another opening it the same way fails with one
// message naming both tests.
func TestWhileRecordingASecondOpeningFails(t *testing.T) {
	srv := echoServer(t)
	path := filepath.Join(t.TempDir(), "shared.yaml")
	withFlags(t, `shared\.yaml$`, false)
	a, err := Open(path, Config{RealTransport: srv.Client().Transport, testName: "TestA"})
	require.NoError(t, err)
	_, err = Open(path, Config{RealTransport: srv.Client().Transport, testName: "TestB"})
	require.ErrorContains(t, err, "TestB opens this cassette under -cassettes.record while TestA is still recording it")
	readAll(t, do(t, a.Client(), srv.URL, reqA))
	require.NoError(t, a.Close())
}

// TestFailedRecordingKeepsTheCassette: a recording that met a transport
// error, or captured nothing, is not saved: an existing cassette stays
// byte for byte, a missing one is not created, and the error names the
// test and the cause.
func TestFailedRecordingKeepsTheCassette(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	existing := recordPlain(t, dir, "existing", srv, []plainReq{reqA})
	before, err := os.ReadFile(existing)
	require.NoError(t, err)
	tests := []struct {
		name, path string
		send       bool
		want, kept string
	}{
		{"dial fails over an existing cassette", existing, true, "TestX's recording failed: ", "the existing cassette is left as it was"},
		{"nothing recorded over an existing cassette", existing, false, "TestX's recording captured no interaction", "the existing cassette is left as it was"},
		{"dial fails, no cassette", filepath.Join(dir, "new.yaml"), true, "TestX's recording failed: ", "no file was written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(tt.path, Config{Mode: Record, RealTransport: noNetwork, testName: "TestX"})
			require.NoError(t, err)
			if tt.send {
				_, err := send(c.Client(), "https://api.anthropic.com", reqA)
				require.ErrorContains(t, err, "no such host")
			}
			err = c.Close()
			require.ErrorContains(t, err, "not saved: "+tt.want)
			require.ErrorContains(t, err, tt.kept)
			if tt.send {
				require.ErrorContains(t, err, "lookup api.anthropic.com: no such host")
			}
			after, rerr := os.ReadFile(existing)
			require.NoError(t, rerr)
			require.Equal(t, string(before), string(after))
			require.NoFileExists(t, filepath.Join(dir, "new.yaml"))
		})
	}
}

// Child tests of TestRecordOncePerProcess: both open the same cassette.
const (
	onceDirEnv = "CASSETTES_ONCE_DIR"
	onceURLEnv = "CASSETTES_ONCE_URL"
)

func onceChild(t *testing.T) {
	dir, base := os.Getenv(onceDirEnv), os.Getenv(onceURLEnv)
	if dir == "" {
		t.Skip("a child of TestRecordOncePerProcess")
	}
	rt, err := Redirect("https://api.anthropic.com", base, nil)
	require.NoError(t, err)
	c := OpenT(t, filepath.Join(dir, "shared.yaml"), Config{RealTransport: rt})
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	readAll(t, do(t, c.Client(), "https://api.anthropic.com", reqA))
}

func TestRecordOnceChildA(t *testing.T) { onceChild(t) }
func TestRecordOnceChildB(t *testing.T) { onceChild(t) }

// TestRecordOncePerProcess: go test -cassettes.record='.*' over two tests
// that share a cassette records it once: the API is asked once, and the
// second test replays.
func TestRecordOncePerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecordOnceChild", "-test.count=1", "-cassettes.record=.*")
	cmd.Env = append(os.Environ(), onceDirEnv+"="+dir, onceURLEnv+"="+srv.URL)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, int64(1), hits.Load(), "the cassette was recorded once")
	c, err := Open(filepath.Join(dir, "shared.yaml"), Config{AllowUnused: true})
	require.NoError(t, err)
	require.Equal(t, 1, c.Interactions())
	require.NoError(t, c.Close())
}
