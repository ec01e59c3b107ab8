package cassettes

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

// treeSnapshot maps every path under root (relative, slash-separated) to
// its mode and bytes (a link's target, a folder's "<dir>").
func treeSnapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String() + " "
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += "-> " + target
		case fi.IsDir():
			v += "<dir>"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += string(b)
		}
		out[filepath.ToSlash(rel)] = v
		return nil
	})
	require.NoError(t, err)
	return out
}

// plantedTree is a cassette directory four levels below base, with one
// applied cassette, and base/outside holding files a planted journal
// aims at.
func plantedTree(t *testing.T) (base, dir string) {
	t.Helper()
	base = t.TempDir()
	dir = filepath.Join(base, "repo", "pkg", "testdata")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "id_rsa"), []byte("-----BEGIN PRIVATE KEY----- not really\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("the victim's content\n"), 0o644))
	return base, dir
}

// plantStage makes a folder that looks like a staging folder in dir, with
// the given files.
func plantStage(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	s := filepath.Join(dir, stagePrefix+"planted")
	require.NoError(t, os.Mkdir(s, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s, stageMarker), []byte(stageIgnore), 0o644))
	for n, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(s, n), []byte(c), 0o644))
	}
	return s
}

// TestPlantedJournalMovesNothing: a journal planted in a staging folder
// that names paths outside the directory (the one from the report, and the
// same with a valid format and check, which anyone can compute) is
// refused, naming the journal and the entry; no file outside the cassette
// directory changes, byte for byte, and nothing inside either.
func TestPlantedJournalMovesNothing(t *testing.T) {
	withCheck := func(moves []journalEntry) string {
		j := journal{Format: journalFormat, Moves: moves}
		j.Check = j.checksum()
		b, err := json.Marshal(j)
		require.NoError(t, err)
		return string(b)
	}
	sum := "0000000000000000000000000000000000000000000000000000000000000000"
	tests := []struct {
		name    string
		journal string
		want    string
	}{
		{"as reported", `{"format":1,"moves":[{"staged":"../../../../outside/id_rsa","file":"stolen.yaml"},{"staged":"payload","file":"../../../outside/victim.txt"}]}`,
			"format 1"},
		{"valid check, staged outside", withCheck([]journalEntry{
			{Staged: "../../../../outside/id_rsa", File: "stolen.yaml", Sum: sum},
			{Staged: stagedManName, File: manifest.Name, Sum: sum}}),
			`entry 0 names "../../../../outside/id_rsa" as its staged file`},
		{"valid check, file outside", withCheck([]journalEntry{
			{Staged: "payload.yaml", File: "../../../outside/victim.txt", Sum: sum},
			{Staged: stagedManName, File: manifest.Name, Sum: sum}}),
			`entry 0 moves "payload.yaml" to "../../../outside/victim.txt"`},
		{"valid check, manifest elsewhere", withCheck([]journalEntry{
			{Staged: "payload.yaml", File: "x.yaml", Sum: sum},
			{Staged: "payload2.yaml", File: "../victim.txt", Sum: sum}}),
			"its last entry moves"},
		{"valid check, absolute", withCheck([]journalEntry{
			{Staged: "payload.yaml", File: "/tmp/x.yaml", Sum: sum},
			{Staged: stagedManName, File: manifest.Name, Sum: sum}}),
			`"/tmp/x.yaml", which is not a cassette file name`},
		{"valid names, wrong content", withCheck([]journalEntry{
			{Staged: "payload.yaml", File: "s.happy.yaml", Sum: sum},
			{Staged: stagedManName, File: manifest.Name, Sum: sum}}),
			"the staged file payload.yaml is not the one journalled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, dir := plantedTree(t)
			s := plantStage(t, dir, map[string]string{journalName: tt.journal, "payload": "planted\n", "payload.yaml": "planted\n"})
			before := treeSnapshot(t, base)

			for _, op := range []struct {
				name string
				run  func() error
			}{
				{"Recover", func() error { return Recover(dir) }},
				{"Apply", func() error {
					sdir, err := NewStage(dir)
					require.NoError(t, err)
					staged := recordPlain(t, sdir, "n.happy", echoServer(t), []plainReq{reqA})
					err = Apply(dir, []Update{{File: "n.happy.yaml", Staged: staged}}, "")
					return err
				}},
			} {
				err := op.run()
				require.ErrorIs(t, err, ErrInterruptedApply, op.name)
				require.ErrorContains(t, err, filepath.Join(s, journalName), op.name)
				require.ErrorContains(t, err, tt.want, op.name)
				require.ErrorContains(t, err, "nothing was moved", op.name)
			}
			after := treeSnapshot(t, base)
			for p, v := range before {
				if filepath.Dir(filepath.FromSlash(p)) != filepath.Join("repo", "pkg", "testdata") || filepath.Base(p)[0] != '.' {
					require.Equal(t, v, after[p], "%s changed", p)
				}
			}
			require.Equal(t, before["outside/id_rsa"], after["outside/id_rsa"])
			require.Equal(t, before["outside/victim.txt"], after["outside/victim.txt"])
			require.Len(t, treeSnapshot(t, filepath.Join(base, "outside")), 3, "nothing added outside")
			require.NotContains(t, after, "repo/pkg/testdata/stolen.yaml")
			require.DirExists(t, s, "the planted folder is left for a person to look at")
		})
	}
}

// TestLinkedStageIsNotOurs: a staging folder that is a link to a folder
// elsewhere is not recovered or removed through.
func TestLinkedStageIsNotOurs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	base, dir := plantedTree(t)
	elsewhere := filepath.Join(base, "outside", "stage")
	require.NoError(t, os.Mkdir(elsewhere, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, stageMarker), []byte(stageIgnore), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "keep.yaml"), []byte("someone's file\n"), 0o644))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, stagePrefix+"link")))
	before := treeSnapshot(t, filepath.Join(base, "outside"))
	require.NoError(t, Recover(dir))
	require.Equal(t, before, treeSnapshot(t, filepath.Join(base, "outside")))
}

// TestManifestEntriesAreFileNames: a manifest entry naming a path outside
// the directory makes the manifest invalid, naming the line; Verify and
// Open read no file for it.
func TestManifestEntriesAreFileNames(t *testing.T) {
	for _, name := range []string{"../outside/victim.yaml", "sub/x.yaml", `..\x.yaml`, "/abs/x.yaml", ".hidden.yaml", "x.json"} {
		t.Run(name, func(t *testing.T) {
			base, dir := plantedTree(t)
			outside := filepath.Join(base, "repo", "pkg", "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			b, err := os.ReadFile(filepath.Join(dir, "s.happy.yaml"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(outside, "victim.yaml"), b, 0o644))
			editManifest(t, dir, func(m *manifest.Manifest) {
				m.Cassettes[0].File = name
				m.History[0].File = name
				c, err := manifest.Chain("", m.History[0])
				require.NoError(t, err)
				m.History[0].Chain = c
			})
			err = Verify(dir, VerifyConfig{})
			require.ErrorIs(t, err, manifest.ErrInvalid)
			require.ErrorContains(t, err, "not a cassette file name")
			require.ErrorContains(t, err, manifest.Name+":")
			require.NotErrorIs(t, err, errDigestMismatch)
			_, err = Open(filepath.Join(dir, "s.happy.yaml"), Config{})
			require.ErrorIs(t, err, manifest.ErrInvalid)
		})
	}
}

// TestApplyFailingPartWaySaysWhatChanged: when the last move of an apply
// (the manifest's) fails after the cassettes were moved in, the error
// names the cassettes already replaced, what is still to move in, and the
// command that completes it, and never says nothing was changed; that
// command then completes it.
func TestApplyFailingPartWaySaysWhatChanged(t *testing.T) {
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "a.happy.yaml", Staged: stage(t, dir, "a.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	reqB := reqA
	reqB.body = `{"other":true}`
	ups := []Update{
		{File: "a.happy.yaml", Staged: stage(t, dir, "a.happy", []plainReq{reqB}), Force: true, Reason: "r"},
		{File: "b.happy.yaml", Staged: stage(t, dir, "b.happy", []plainReq{reqB})},
	}
	steps := 0
	applyStep = func() {
		steps++
		if steps == 3 { // before the manifest's move
			mpath := filepath.Join(dir, manifest.Name)
			require.NoError(t, os.Remove(mpath))
			require.NoError(t, os.MkdirAll(filepath.Join(mpath, "obstacle"), 0o755))
		}
	}
	t.Cleanup(func() { applyStep = func() {} })
	err = Apply(dir, ups, "")
	applyStep = func() {}
	require.ErrorIs(t, err, ErrInterruptedApply)
	require.ErrorContains(t, err, "a.happy.yaml, b.happy.yaml in "+dir+" were already replaced by the new version")
	require.ErrorContains(t, err, "still to move in: "+manifest.Name)
	require.ErrorContains(t, err, recoverCommand(dir)+" completes it")
	require.NotContains(t, err.Error(), "nothing")

	require.NoError(t, os.RemoveAll(filepath.Join(dir, manifest.Name)))
	require.NoError(t, Recover(dir))
	require.NoError(t, Verify(dir, VerifyConfig{}))
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m.Cassettes, 2)
}

// TestInterruptedApplySaysWhatHappened: what reads a directory left with
// the journal of an unfinished apply (Open and Verify, so the gate) says
// the refresh failed, with its cause, when the apply failed part-way in a
// process that went on running; and that it stopped (killed or crashed)
// only when no failure was noted.
func TestInterruptedApplySaysWhatHappened(t *testing.T) {
	tests := []struct {
		name      string
		forget    bool // remove the failure note, as a killed process never writes it
		want      []string
		wantNever string
	}{
		{"failed part-way", false, []string{"a refresh failed part-way while it moved re-recorded cassettes into place", manifest.Name}, "killed"},
		{"killed", true, []string{"a refresh stopped part-way", "it was killed or crashed"}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, Apply(dir, []Update{{File: "a.happy.yaml", Staged: stage(t, dir, "a.happy", []plainReq{reqA})}}, ""))
			reqB := reqA
			reqB.body = `{"other":true}`
			ups := []Update{{File: "a.happy.yaml", Staged: stage(t, dir, "a.happy", []plainReq{reqB}), Force: true, Reason: "r"}}
			steps := 0
			applyStep = func() {
				if steps++; steps == 2 { // before the manifest's move
					mpath := filepath.Join(dir, manifest.Name)
					require.NoError(t, os.Remove(mpath))
					require.NoError(t, os.MkdirAll(filepath.Join(mpath, "obstacle"), 0o755))
				}
			}
			t.Cleanup(func() { applyStep = func() {} })
			require.ErrorIs(t, Apply(dir, ups, ""), ErrInterruptedApply)
			applyStep = func() {}
			require.NoError(t, os.RemoveAll(filepath.Join(dir, manifest.Name)))
			if tt.forget {
				notes, err := filepath.Glob(filepath.Join(dir, stagePrefix+"*", failedName))
				require.NoError(t, err)
				require.Len(t, notes, 1)
				require.NoError(t, os.Remove(notes[0]))
			}
			_, oerr := Open(filepath.Join(dir, "a.happy.yaml"), Config{})
			for _, err := range []error{Verify(dir, VerifyConfig{}), oerr} {
				require.ErrorIs(t, err, ErrInterruptedApply)
				for _, w := range tt.want {
					require.ErrorContains(t, err, w)
				}
				require.NotContains(t, err.Error(), tt.wantNever)
				require.ErrorContains(t, err, recoverCommand(dir))
			}
			require.NoError(t, Recover(dir))
			require.NoError(t, Verify(dir, VerifyConfig{}))
			require.Empty(t, stages(dir), "the note goes with its staging folder")
		})
	}
}
