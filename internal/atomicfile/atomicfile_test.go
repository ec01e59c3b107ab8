package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var errInjected = errors.New("disk full (simulated)")

// faultyFile wraps a real temporary file and fails at one step; a failing
// Write first writes half of its input, like a process killed mid-write.
type faultyFile struct {
	f      *os.File
	failAt string // "write", "sync" or "close"
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if f.failAt == "write" {
		n, _ := f.f.Write(b[:len(b)/2])
		return n, errInjected
	}
	return f.f.Write(b)
}

func (f *faultyFile) Sync() error {
	if f.failAt == "sync" {
		return errInjected
	}
	return f.f.Sync()
}

func (f *faultyFile) Close() error {
	err := f.f.Close()
	if f.failAt == "close" {
		return errInjected
	}
	return err
}

func (f *faultyFile) Name() string { return f.f.Name() }

func failingAt(step string) Config {
	return Config{CreateTemp: func(dir, pattern string) (File, error) {
		if step == "create" {
			return nil, errInjected
		}
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &faultyFile{f: f, failAt: step}, nil
	}}
}

// snapshot maps every entry of dir to its contents ("<dir>" for
// directories), so leftover temporary files show up.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range ents {
		if e.IsDir() {
			out[e.Name()] = "<dir>"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name string
		old  *string
		perm os.FileMode
	}{
		{name: "new file", perm: 0o644},
		{name: "replaces existing", old: new("old contents"), perm: 0o644},
		{name: "private mode", old: new("old"), perm: 0o600},
		{name: "executable mode", perm: 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tt.old != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tt.old), 0o600))
			}
			require.NoError(t, WriteFile(path, []byte("new contents"), tt.perm))
			require.Equal(t, map[string]string{"f.json": "new contents"}, snapshot(t, dir), "no temporary file left")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, tt.perm, fi.Mode().Perm())
		})
	}
}

func TestWriteFileFailureLeavesOldFile(t *testing.T) {
	for _, step := range []string{"create", "write", "sync", "close"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.yaml")
			require.NoError(t, os.WriteFile(path, []byte("the old file"), 0o644))
			before := snapshot(t, dir)
			err := failingAt(step).WriteFile(path, []byte("a long new file that is cut in half"), 0o644)
			require.ErrorIs(t, err, errInjected)
			require.ErrorContains(t, err, path)
			require.ErrorContains(t, err, "previous file is unchanged")
			require.Equal(t, before, snapshot(t, dir), "old file unchanged, no temporary file left")
		})
	}
}

func TestWriteFileErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}{
		{
			name:  "missing directory",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "missing", "f") },
			want:  "create temporary file for",
		},
		{
			name: "target is a non-empty directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "d")
				require.NoError(t, os.MkdirAll(filepath.Join(p, "x"), 0o755))
				return p
			},
			want: "rename temporary file to",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := snapshot(t, dir)
			err := WriteFile(path, []byte("x"), 0o644)
			require.ErrorContains(t, err, tt.want+" "+path)
			require.ErrorContains(t, err, "previous file is unchanged")
			require.Equal(t, before, snapshot(t, dir), "no temporary file left")
		})
	}
}

func TestStage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))

	s, err := Config{}.Stage(path, []byte("new"), 0o644)
	require.NoError(t, err)
	snap := snapshot(t, dir)
	require.Len(t, snap, 2, "target plus one staged file")
	require.Equal(t, "old", snap["m.json"], "staging does not touch the target")
	for name := range snap {
		if name != "m.json" {
			require.Regexp(t, `^\.m\.json\.tmp-[0-9]+$`, name)
		}
	}
	s.Discard()
	s.Discard()
	require.Equal(t, map[string]string{"m.json": "old"}, snapshot(t, dir))
	require.ErrorIs(t, s.Commit(), ErrFinished)
	require.Equal(t, map[string]string{"m.json": "old"}, snapshot(t, dir))

	s, err = Config{}.Stage(path, []byte("new"), 0o644)
	require.NoError(t, err)
	require.NoError(t, s.Commit())
	s.Discard() // no effect after Commit
	require.Equal(t, map[string]string{"m.json": "new"}, snapshot(t, dir))
	require.ErrorIs(t, s.Commit(), ErrFinished)
}

func TestStageFuncFillError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.zst")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	_, err := Config{}.StageFunc(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "partial")
		return errors.Join(err, errInjected)
	})
	require.ErrorIs(t, err, errInjected)
	require.ErrorContains(t, err, "write "+path)
	require.Equal(t, map[string]string{"b.zst": "old"}, snapshot(t, dir))
}

func BenchmarkWriteFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	data := make([]byte, 64<<10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
