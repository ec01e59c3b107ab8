package gate_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestReadResultRefuses: a result file is a regular file of valid shape:
// bad shards and negative counts are refused naming the field, a FIFO or
// a symbolic link is refused without being opened.
func TestReadResultRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(r *gate.Result)
		want string
	}{
		{"shard-7/2", func(r *gate.Result) { r.Shard = "7/2" }, "shard is 7/2"},
		{"shard-0/0", func(r *gate.Result) { r.Shard = "0/0" }, "shard is 0/0"},
		{"shard-junk", func(r *gate.Result) { r.Shard = "a/b" }, "shard is a/b"},
		{"negative-runs", func(r *gate.Result) { r.Runs = -5 }, "runs is -5"},
		{"negative-floor", func(r *gate.Result) { r.Floor = -1 }, "floor is -1"},
		{"negative-class", func(r *gate.Result) { r.Classes[0].Runs = -50 }, "classes[0].runs is -50"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := passResult("a")
			tt.edit(&r)
			dir := t.TempDir()
			p, err := r.Save(dir)
			require.NoError(t, err)
			_, err = gate.ReadResult(p)
			require.ErrorIs(t, err, gate.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
			_, err = gate.MergeResults([]gate.Result{r})
			require.ErrorIs(t, err, gate.ErrBadResult)
		})
	}
	t.Run("fifo", func(t *testing.T) {
		dir := t.TempDir()
		_, err := passResult("a").Save(dir)
		require.NoError(t, err)
		fifo := filepath.Join(dir, "zz.json")
		if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
			t.Skipf("no mkfifo here: %v %s", err, out)
		}
		done := make(chan error, 1)
		go func() { _, err := gate.ReadResults(dir); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, gate.ErrBadResult)
			require.ErrorContains(t, err, "zz.json is not a regular file")
		case <-time.After(10 * time.Second):
			// Unblock the reader so that no goroutine outlives the test.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			w.Close()
			<-done
			t.Fatal("ReadResults blocked on a FIFO")
		}
	})
	t.Run("other-format", func(t *testing.T) {
		// Save writes this package's format whatever r.Format says;
		// a file of another format is refused, naming it.
		r := passResult("a")
		r.Format = "codegenie-gate-result/4"
		p, err := r.Save(t.TempDir())
		require.NoError(t, err)
		got, err := gate.ReadResult(p)
		require.NoError(t, err)
		require.Equal(t, "codegenie-gate-result/3", got.Format)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("gate-result/3"), []byte("gate-result/2"), 1), 0o644))
		_, err = gate.ReadResult(p)
		require.ErrorIs(t, err, gate.ErrBadResult)
		require.ErrorContains(t, err, `format "codegenie-gate-result/2"`)
	})
	t.Run("object-bomb", func(t *testing.T) {
		// 3 bytes of JSON per class, each decoded into a Class struct.
		p := filepath.Join(t.TempDir(), "a.json")
		bomb := `{"format":"codegenie-gate-result/3","scenario":"a","verdict":"PASS","classes":[` + strings.Repeat("{},", 1<<20) + `{}]}`
		require.NoError(t, os.WriteFile(p, []byte(bomb), 0o644))
		_, err := gate.ReadResult(p)
		require.ErrorIs(t, err, gate.ErrBadResult)
		require.ErrorContains(t, err, "JSON objects")
	})
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		p, err := passResult("a").Save(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, "a.json")))
		_, err = gate.ReadResults(dir)
		require.ErrorIs(t, err, gate.ErrBadResult)
		require.ErrorContains(t, err, "not a regular file")
	})
}
