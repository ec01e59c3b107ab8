package cassettes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/hint"
)

// Staging folders and the journal (see the package documentation, Applying
// re-recorded cassettes).
const (
	stagePrefix   = ".refresh-"
	journalName   = "journal.json"
	stageMarker   = ".gitignore"
	stageIgnore   = "# a codegenie cassettes staging folder: removed by the next refresh\n*\n"
	stagedManName = "manifest.json.new"
)

// Update is one re-recorded cassette for Apply.
type Update struct {
	// File is the cassette's name in the directory (see FileName).
	File string
	// Staged is the freshly recorded cassette, inside a folder NewStage
	// made in the same directory.
	Staged string
	// Force and Reason are required to replace a pinned cassette; the
	// reason goes into the manifest history.
	Force  bool
	Reason string
	// RecordedAt is when the cassette was recorded, for the manifest's
	// recorded_at; zero means Apply's at when it is an RFC 3339 time.
	RecordedAt time.Time
}

// journal is what Apply decided, written before it changes anything in
// the directory: every file it moves in, with the digest it must have.
type journal struct {
	Format int            `json:"format"`
	Moves  []journalEntry `json:"moves"` // cassettes first, the manifest last
}

type journalEntry struct {
	Staged string `json:"staged"` // name in the staging folder
	File   string `json:"file"`   // name in the directory
	Sum    string `json:"sum"`    // blake3 of the file's bytes
}

// NewStage makes a staging folder in dir (created if missing) for
// cassettes about to be recorded and applied. git ignores it (it holds a
// .gitignore of "*"); Apply removes it, and so does the next Recover if
// the process dies first.
func NewStage(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", newErr(dir, 0, "write", err)
	}
	stage, err := os.MkdirTemp(dir, stagePrefix)
	if err != nil {
		return "", newErr(dir, 0, "write", err)
	}
	if err := os.WriteFile(filepath.Join(stage, stageMarker), []byte(stageIgnore), 0o644); err != nil {
		os.RemoveAll(stage)
		return "", newErr(stage, 0, "write", err)
	}
	return stage, nil
}

// Apply moves staged cassettes into dir and records them in dir's manifest
// (created if missing), with at (any text; refresh-cassettes writes an
// RFC 3339 time) in each history entry, and returns the new manifest.
//
// Readers see all or nothing: Apply first validates everything and writes
// the new manifest and a journal of the moves into the staging folder; only
// then does it move files into dir. A process killed before the journal is
// written changed nothing in dir; one killed after it leaves a journal that
// Open and Verify report (ErrInterruptedApply, naming the repair command)
// and that Recover, which every Apply runs first, completes.
func Apply(dir string, updates []Update, at string) (*Manifest, error) {
	return apply(dir, updates, at, nil)
}

// applyStep is a test seam called between the moves of an apply.
var applyStep = func() {}

func apply(dir string, updates []Update, at string, create func(string, string) (tempFile, error)) (*Manifest, error) {
	if len(updates) == 0 {
		return nil, newErr(dir, 0, "manifest", errors.New("nothing to apply"))
	}
	stage := filepath.Dir(updates[0].Staged)
	if err := recoverExcept(dir, stage); err != nil {
		return nil, err
	}
	mpath := filepath.Join(dir, ManifestName)
	m, err := ReadManifest(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		m, err = &Manifest{Format: ManifestFormat}, nil
	}
	if err != nil {
		return nil, err
	}
	var j journal
	j.Format = 1
	for _, u := range updates {
		if u.File != filepath.Base(u.File) || !strings.HasSuffix(u.File, ".yaml") {
			return nil, newErr(u.Staged, 0, "manifest", fmt.Errorf("update file %q is not a cassette file name", u.File))
		}
		if filepath.Dir(u.Staged) != stage || !isStage(stage) || filepath.Dir(stage) != filepath.Clean(dir) {
			return nil, newErr(u.Staged, 0, "manifest", fmt.Errorf("staged cassettes must all be in one folder made by NewStage(%q)", dir))
		}
		p, err := readCassette(u.Staged, "")
		if err != nil {
			return nil, err
		}
		// A manifest entry vouches that its content was scanned.
		if err := secretError(p, "manifest", "", "", true); err != nil {
			return nil, err
		}
		if old, ok := m.Lookup(u.File); ok && old.Pinned && old.Digest != p.digest.String() && (!u.Force || u.Reason == "") {
			return nil, newErr(filepath.Join(dir, u.File), 0, "manifest", detailf(ErrPinned,
				"%v: a golden digest depends on %s; re-record it with -force -reason 'why'", ErrPinned, u.File))
		}
		e := Entry{File: u.File, Digest: p.digest.String(), Interactions: len(p.c.Interactions), Model: modelOf(p), RecordedAt: recordedAt(u, at)}
		if err := m.update(e, u.Force, u.Reason, at); err != nil {
			return nil, newErr(mpath, 0, "manifest", err)
		}
		j.Moves = append(j.Moves, journalEntry{Staged: filepath.Base(u.Staged), File: u.File, Sum: events.Sum(p.raw).String()})
	}
	data, err := m.encode()
	if err != nil {
		return nil, newErr(mpath, 0, "manifest", err)
	}
	opts := atomicfile.Options{CreateTemp: create}
	if err := opts.WriteFile(filepath.Join(stage, stagedManName), data, filePerm); err != nil {
		return nil, newErr(mpath, 0, "write", err)
	}
	j.Moves = append(j.Moves, journalEntry{Staged: stagedManName, File: ManifestName, Sum: events.Sum(data).String()})
	jb, err := json.Marshal(j)
	if err != nil {
		return nil, newErr(stage, 0, "write", err)
	}
	// The commit point: once the journal exists, the apply completes.
	if err := opts.WriteFile(filepath.Join(stage, journalName), jb, filePerm); err != nil {
		return nil, newErr(filepath.Join(stage, journalName), 0, "write", err)
	}
	if err := rollForward(dir, stage, j); err != nil {
		return nil, err
	}
	return m, nil
}

// rollForward moves every staged file of j into dir (a file already moved
// must have its journalled digest), then removes the staging folder.
func rollForward(dir, stage string, j journal) error {
	for _, mv := range j.Moves {
		applyStep()
		src, dst := filepath.Join(stage, mv.Staged), filepath.Join(dir, mv.File)
		err := os.Rename(src, dst)
		if errors.Is(err, fs.ErrNotExist) {
			raw, rerr := os.ReadFile(dst)
			if rerr != nil || events.Sum(raw).String() != mv.Sum {
				return newErr(dst, 0, "recover", detailf(ErrInterruptedApply,
					"%v: the journal in %s moves %s here, but neither the staged file nor a file with its digest exists; restore %s from version control and re-record",
					ErrInterruptedApply, stage, mv.Staged, dir))
			}
			continue
		}
		if err != nil {
			return newErr(dst, 0, "write", err)
		}
	}
	syncDir(dir)
	applyStep()
	if err := os.Remove(filepath.Join(stage, journalName)); err != nil {
		return newErr(stage, 0, "write", err)
	}
	return removeStage(stage)
}

// isStage reports whether path is a staging folder NewStage made.
func isStage(path string) bool {
	if !strings.HasPrefix(filepath.Base(path), stagePrefix) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(path, stageMarker))
	if err == nil && string(b) == stageIgnore {
		return true
	}
	// NewStage killed between making the folder and finishing its marker
	// leaves the folder empty, or holding only part of the marker.
	ents, rerr := os.ReadDir(path)
	switch {
	case rerr != nil:
		return false
	case len(ents) == 0:
		return true
	case len(ents) == 1 && ents[0].Name() == stageMarker && err == nil:
		return strings.HasPrefix(stageIgnore, string(b))
	}
	return false
}

// removeStage removes a staging folder: only what NewStage, recording and
// Apply put there (cassettes, the staged manifest, the journal, their
// temporary files and the marker), and then the folder.
func removeStage(stage string) error {
	ents, err := os.ReadDir(stage)
	if err != nil {
		return newErr(stage, 0, "recover", err)
	}
	for _, e := range ents {
		n := e.Name()
		ours := !e.IsDir() && (strings.HasSuffix(n, ".yaml") || n == stagedManName || n == journalName ||
			strings.Contains(n, ".tmp-") || n == stageMarker)
		if !ours {
			return newErr(filepath.Join(stage, n), 0, "recover", fmt.Errorf("not removing the staging folder %s: it holds %q, which no refresh wrote", stage, n))
		}
	}
	for _, e := range ents {
		if e.Name() != stageMarker {
			os.Remove(filepath.Join(stage, e.Name()))
		}
	}
	os.Remove(filepath.Join(stage, stageMarker))
	if err := os.Remove(stage); err != nil {
		return newErr(stage, 0, "recover", err)
	}
	return nil
}

// stages lists dir's staging folders.
func stages(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, stagePrefix+"*"))
	var out []string
	for _, s := range m {
		if isStage(s) {
			out = append(out, s)
		}
	}
	return out
}

// Recover finishes or discards what killed refreshes left in dir: a
// staging folder with a journal is rolled forward (the apply had decided),
// one without is removed (nothing in dir had changed), and so are the
// temporary files of interrupted atomic writes of the manifest and of
// cassettes. Apply runs it first (sparing its own staging folder); it is safe to run at any time no
// refresh of dir is running.
func Recover(dir string) error { return recoverExcept(dir, "") }

func recoverExcept(dir, keep string) error {
	for _, s := range stages(dir) {
		if s == keep {
			continue
		}
		jb, err := os.ReadFile(filepath.Join(s, journalName))
		if errors.Is(err, fs.ErrNotExist) {
			if err := removeStage(s); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return newErr(s, 0, "recover", err)
		}
		var j journal
		if err := json.Unmarshal(jb, &j); err != nil || j.Format != 1 {
			return newErr(filepath.Join(s, journalName), 0, "recover", detailf(ErrInterruptedApply,
				"%v: unreadable journal (%v); restore %s from version control and re-record", ErrInterruptedApply, err, dir))
		}
		if err := rollForward(dir, s, j); err != nil {
			return err
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	for _, t := range tmps {
		base := strings.TrimPrefix(filepath.Base(t), ".")
		if name, _, ok := strings.Cut(base, ".tmp-"); ok && (name == ManifestName || strings.HasSuffix(name, ".yaml")) {
			os.Remove(t)
		}
	}
	return nil
}

// RecoverCommand is the command that runs Recover on dir, as printed in
// ErrInterruptedApply messages.
func RecoverCommand(dir string) string {
	return hint.Tool("refresh-cassettes", "-recover", "-dir", dir)
}

// interrupted returns an ErrInterruptedApply if dir holds the journal of
// an apply a killed process did not finish.
func interrupted(dir string) error {
	for _, s := range stages(dir) {
		if _, err := os.Stat(filepath.Join(s, journalName)); err == nil {
			return newErr(dir, 0, "verify", detailf(ErrInterruptedApply,
				"%v: a refresh was killed while it moved re-recorded cassettes into place (its journal is %s), so some cassettes may be new and others old; repair it with: %s",
				ErrInterruptedApply, filepath.Join(s, journalName), RecoverCommand(dir)))
		}
	}
	return nil
}

// syncDir makes renames in dir durable, as far as the platform allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
