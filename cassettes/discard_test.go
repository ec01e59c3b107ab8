package cassettes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDiscardPutsBackThePrevious: a recording made by the record switch
// and then discarded leaves the directory byte for byte as it was before:
// with or without a manifest, with or without an earlier cassette.
func TestDiscardPutsBackThePrevious(t *testing.T) {
	tests := []struct {
		name              string
		manifest, earlier bool
	}{
		{"manifest, earlier cassette", true, true},
		{"manifest, new cassette", true, false},
		{"no manifest, earlier cassette", false, true},
		{"no manifest, new cassette", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t)
			dir := t.TempDir()
			if tt.manifest {
				err := Apply(dir, []Update{{File: "other.yaml", Staged: stage(t, dir, "other", []plainReq{reqA})}}, "")
				require.NoError(t, err)
			}
			if tt.earlier && tt.manifest {
				err := Apply(dir, []Update{{File: "s.yaml", Staged: stage(t, dir, "s", []plainReq{reqA})}}, "")
				require.NoError(t, err)
			} else if tt.earlier {
				recordPlain(t, dir, "s", srv, []plainReq{reqA})
			}
			before := dirSnapshot(t, dir)
			withFlags(t, `s\.yaml$`, false)
			c, err := Open(filepath.Join(dir, "s.yaml"), Config{RealTransport: srv.Client().Transport})
			require.NoError(t, err)
			require.Equal(t, Record, c.Mode())
			reqB := reqA
			reqB.body = `{"changed":true}`
			readAll(t, do(t, c.Client(), srv.URL, reqB))
			require.NoError(t, c.Close())
			require.NotEqual(t, before, dirSnapshot(t, dir))
			require.NoError(t, c.Discard())
			require.Equal(t, before, dirSnapshot(t, dir))
			if tt.manifest {
				require.NoError(t, Verify(dir, VerifyConfig{}))
			}
			left, _ := filepath.Glob(filepath.Join(dir, stagePrefix+"*"))
			require.Empty(t, left)
			require.NoError(t, c.Discard(), "a second Discard does nothing")
		})
	}
}

// TestDiscardRefusesAChangedFile: a cassette changed since the recording
// saved it is not discarded.
func TestDiscardRefusesAChangedFile(t *testing.T) {
	srv := echoServer(t)
	path := filepath.Join(t.TempDir(), "s.yaml")
	withFlags(t, `s\.yaml$`, false)
	c, err := Open(path, Config{RealTransport: srv.Client().Transport})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, reqA))
	require.NoError(t, c.Close())
	require.NoError(t, os.WriteFile(path, []byte("edited by hand\n"), 0o644))
	require.ErrorContains(t, c.Discard(), "changed since the recording saved it")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "edited by hand\n", string(b))
}
