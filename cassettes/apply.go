package cassettes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/manifest"
)

// Staging folders and the journal (see the package documentation, Applying
// re-recorded cassettes).
const (
	stagePrefix   = ".refresh-"
	journalName   = "journal.json"
	stageMarker   = ".gitignore"
	stageIgnore   = "# a codegenie cassettes staging folder: removed by the next refresh\n*\n"
	stagedManName = "manifest.json.new"
	// failedName is the note an apply that failed part-way leaves beside
	// its journal: the cause, so that a reader of the directory says the
	// refresh failed rather than that it was killed.
	failedName = "apply-failed.txt"
)

// maxFailedNote bounds the note of a failed apply, written and read.
const maxFailedNote = 2 << 10

// Update is one re-recorded cassette for Apply.
type Update struct {
	// File is the cassette's name in the directory: a plain name ending
	// in ".yaml".
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

// NewStage makes a staging folder in dir (created if missing) for
// cassettes about to be recorded and applied. git ignores it (it holds a
// .gitignore of "*"). It holds its own lock while this process lives, so
// no Recover removes it while it is being filled; Apply removes it, and so
// does the first Recover after the process that made it has ended.
func NewStage(dir string) (string, error) {
	var stage string
	err := withLock(dir, func() error {
		var err error
		stage, err = newStage(dir)
		return err
	})
	return stage, err
}

// newStage is NewStage with dir's lock held.
func newStage(dir string) (string, error) {
	stage, err := os.MkdirTemp(dir, stagePrefix)
	if err != nil {
		return "", newErr(dir, 0, "write", err)
	}
	if err := os.WriteFile(filepath.Join(stage, stageMarker), []byte(stageIgnore), 0o644); err != nil {
		os.RemoveAll(stage)
		return "", newErr(stage, 0, "write", err)
	}
	if ok, err := holdStage(stage); err != nil || !ok {
		os.RemoveAll(stage)
		if err == nil {
			err = newErr(stage, 0, "write", errors.New("the new staging folder's lock is held elsewhere"))
		}
		return "", err
	}
	return stage, nil
}

// Apply moves staged cassettes into dir and records them in dir's manifest
// (created if missing), with at (any text; refresh-cassettes writes an
// RFC 3339 time) in each history entry.
//
// Readers see all or nothing: Apply first validates everything and writes
// the new manifest and a journal of the moves into the staging folder; only
// then does it move files into dir. A process killed before the journal is
// written changed nothing in dir; one killed after it leaves a journal that
// Open and Verify report (ErrInterruptedApply, naming the repair command)
// and that Recover, which every Apply runs first, completes.
func Apply(dir string, updates []Update, at string) error {
	if len(updates) > 0 {
		if l := stageLock(dir, filepath.Dir(updates[0].Staged)); l != nil {
			return l.apply(updates, at)
		}
	}
	return withLock(dir, func() error {
		_, err := apply(dir, updates, at, nil)
		return err
	})
}

// apply is Apply with dir's lock held.
func apply(dir string, updates []Update, at string, create func(string, string) (tempFile, error)) (*manifest.Manifest, error) {
	if len(updates) == 0 {
		return nil, newErr(dir, 0, "manifest", errors.New("nothing to apply"))
	}
	stage := filepath.Dir(updates[0].Staged)
	if err := recoverDir(dir, stage); err != nil {
		return nil, err
	}
	mpath := filepath.Join(dir, manifest.Name)
	m, err := manifest.Read(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		m, err = &manifest.Manifest{Format: manifest.Format}, nil
	}
	if err != nil {
		return nil, err
	}
	j := journal{Format: journalFormat}
	for _, u := range updates {
		if !manifest.IsCassetteName(u.File) {
			return nil, newErr(u.Staged, 0, "manifest", fmt.Errorf("update file %q is not a cassette file name (a plain name ending in .yaml)", u.File))
		}
		if filepath.Dir(u.Staged) != stage || !isStage(stage) || filepath.Dir(stage) != filepath.Clean(dir) {
			return nil, newErr(u.Staged, 0, "manifest", fmt.Errorf("staged cassettes must all be in one folder made by NewStage(%q)", dir))
		}
		if !manifest.IsCassetteName(filepath.Base(u.Staged)) {
			return nil, newErr(u.Staged, 0, "manifest", fmt.Errorf("staged file %q is not a cassette file name (a plain name ending in .yaml)", filepath.Base(u.Staged)))
		}
		if fi, err := os.Lstat(u.Staged); err == nil && !fi.Mode().IsRegular() {
			return nil, newErr(u.Staged, 0, "manifest", errors.New("the staged cassette is not a regular file"))
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
			return nil, newErr(filepath.Join(dir, u.File), 0, "manifest", detailf(manifest.ErrPinned,
				"%v: a golden digest depends on %s; re-record it with -force -reason 'why'", manifest.ErrPinned, u.File))
		}
		e := manifest.Entry{File: u.File, Digest: p.digest.String(), Interactions: len(p.c.Interactions), Model: modelOf(p), RecordedAt: recordedAt(u, at)}
		if err := m.Update(e, u.Force, u.Reason, at); err != nil {
			return nil, newErr(mpath, 0, "manifest", err)
		}
		j.Moves = append(j.Moves, journalEntry{Staged: filepath.Base(u.Staged), File: u.File, Sum: events.Sum(p.raw).String()})
	}
	data, err := m.Encode()
	if err != nil {
		return nil, newErr(mpath, 0, "manifest", err)
	}
	cfg := atomicfile.Config{CreateTemp: create}
	if err := cfg.WriteFile(filepath.Join(stage, stagedManName), data, filePerm); err != nil {
		return nil, newErr(mpath, 0, "write", err)
	}
	j.Moves = append(j.Moves, journalEntry{Staged: stagedManName, File: manifest.Name, Sum: events.Sum(data).String()})
	j.Check = j.checksum()
	jb, err := json.Marshal(j)
	if err != nil {
		return nil, newErr(stage, 0, "write", err)
	}
	// The commit point: once the journal exists, the apply completes.
	if err := cfg.WriteFile(filepath.Join(stage, journalName), jb, filePerm); err != nil {
		return nil, newErr(filepath.Join(stage, journalName), 0, "write", err)
	}
	if made, err := rollForward(dir, stage, &j); err != nil {
		// Decided: the folder is Recover's to complete from now on.
		noteFailure(stage, err)
		releaseStage(stage)
		return nil, partialError(dir, stage, &j, made, err)
	}
	// Applied. A folder that cannot be removed now holds no journal, so
	// the next Recover removes it (or reports what else it holds).
	removeStage(stage)
	return m, nil
}

// partialError is the error of an apply that failed after its journal was
// written: it names what was moved into dir, what was not, and what the
// recovery command will do.
func partialError(dir, stage string, j *journal, made []string, err error) error {
	var left []string
	for _, mv := range j.Moves {
		if !slices.Contains(made, mv.File) {
			left = append(left, mv.File)
		}
	}
	jpath := filepath.Join(stage, journalName)
	changed := "nothing in " + dir + " was changed yet"
	if len(made) > 0 {
		changed = fmt.Sprintf("%s in %s %s already replaced by the new version", strings.Join(made, ", "), dir, plural(len(made), "was", "were"))
	}
	if len(left) == 0 {
		return newErr(dir, 0, "apply", detailf(ErrInterruptedApply,
			"%v: every new file is in place in %s, but the journal %s could not be removed: %v\n%s removes it and the staging folder %s; it moves nothing",
			ErrInterruptedApply, dir, jpath, err, recoverCommand(dir), stage))
	}
	return newErr(dir, 0, "apply", detailf(ErrInterruptedApply,
		"%v: the refresh was decided (its journal is %s) but failed part-way: %v\n%s; still to move in: %s. %s completes it: it checks the journal, moves the rest of the new files in, then removes %s",
		ErrInterruptedApply, jpath, err, changed, strings.Join(left, ", "), recoverCommand(dir), stage))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// isStage reports whether path is a staging folder NewStage made: a
// folder (not a link) named like one, holding the marker NewStage writes.
func isStage(path string) bool {
	if !strings.HasPrefix(filepath.Base(path), stagePrefix) {
		return false
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return false
	}
	mpath := filepath.Join(path, stageMarker)
	fi, merr := os.Lstat(mpath)
	if merr == nil && !fi.Mode().IsRegular() {
		return false
	}
	b, err := readBounded(mpath, int64(len(stageIgnore)))
	if err == nil && string(b) == stageIgnore {
		return true
	}
	// NewStage killed between making the folder and finishing its marker
	// leaves the folder empty, or holding only part of the marker (and
	// perhaps its lock).
	ents, rerr := os.ReadDir(path)
	if rerr != nil || len(ents) > 2 {
		return false
	}
	for _, e := range ents {
		switch {
		case e.Name() == lockFileName && e.Type().IsRegular():
		case e.Name() == stageMarker && err == nil && strings.HasPrefix(stageIgnore, string(b)):
		default:
			return false
		}
	}
	return true
}

// ownsName reports whether a refresh writes files named n in a staging
// folder: cassettes, the staged manifest, the journal, their temporary
// files, the marker and the folder's lock.
func ownsName(n string) bool {
	if base, _, ok := strings.Cut(strings.TrimPrefix(n, "."), ".tmp-"); ok && strings.HasPrefix(n, ".") {
		return manifest.IsCassetteName(base) || base == stagedManName || base == journalName
	}
	return manifest.IsCassetteName(n) || n == stagedManName || n == journalName || n == stageMarker || n == lockFileName || n == failedName
}

// noteFailure writes, beside the journal in stage, why the apply failed
// part-way, so that what reports the journal names the failure. Writing
// it is best effort: without it a reader says only that the refresh
// stopped.
func noteFailure(stage string, err error) {
	note := excerpt.Head(maskSecrets(err.Error(), ""), maxFailedNote)
	atomicfile.WriteFile(filepath.Join(stage, failedName), []byte(note), filePerm)
}

// failureNote returns the cause a failed apply noted in stage, quoted
// for printing, or "" when there is none.
func failureNote(stage string) string {
	path := filepath.Join(stage, failedName)
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, err := readBounded(path, maxFailedNote)
	if err != nil || len(b) == 0 {
		return ""
	}
	return excerpt.Quote(maskSecrets(string(b), ""))
}

// removeStage removes a staging folder: only the regular files a refresh
// writes there (see ownsName), and then the folder. It releases the
// folder's lock first if this process holds it.
func removeStage(stage string) error {
	ents, err := os.ReadDir(stage)
	if err != nil {
		return newErr(stage, 0, "recover", err)
	}
	for _, e := range ents {
		if n := e.Name(); !e.Type().IsRegular() || !ownsName(n) {
			return newErr(filepath.Join(stage, n), 0, "recover", fmt.Errorf("not removing the staging folder %s: it holds %q, which no refresh wrote; look at it, then remove it", stage, n))
		}
	}
	releaseStage(stage)
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
// cassettes. A staging folder whose lock is held belongs to a refresh
// still running and is left alone. Before it moves anything, it checks the
// journal: every name in it a plain file name of its kind (a cassette's
// *.yaml, the manifest's manifest.json), its check intact, every staged
// file a regular file with its journalled digest, every cassette readable
// and free of secrets, and the staged manifest listing them; a journal
// that fails any of these is refused, naming the file and the entry, and
// nothing is moved. It holds dir's refresh lock while it works (see
// the package documentation, Applying re-recorded cassettes); Apply runs it
// first.
func Recover(dir string) error {
	return withLock(dir, func() error { return recoverDir(dir, "") })
}

// recoverDir is Recover with dir's lock held, sparing keep.
func recoverDir(dir, keep string) error {
	for _, s := range stages(dir) {
		if s == keep {
			continue
		}
		ok, err := holdStage(s)
		if err != nil {
			return err
		}
		if !ok {
			continue // a refresh still filling it
		}
		if err := recoverStage(dir, s); err != nil {
			releaseStage(s)
			return err
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	for _, t := range tmps {
		base := strings.TrimPrefix(filepath.Base(t), ".")
		name, _, _ := strings.Cut(base, ".tmp-")
		if fi, err := os.Lstat(t); err == nil && fi.Mode().IsRegular() && (name == manifest.Name || manifest.IsCassetteName(name)) {
			os.Remove(t)
		}
	}
	return nil
}

// recoverStage rolls the journal of stage forward, or removes a stage
// without one.
func recoverStage(dir, s string) error {
	if _, err := os.Lstat(filepath.Join(s, journalName)); errors.Is(err, fs.ErrNotExist) {
		return removeStage(s)
	}
	j, err := readJournal(dir, s)
	if err != nil {
		return err
	}
	if _, err := rollForward(dir, s, j); err != nil {
		return err
	}
	return removeStage(s)
}

// recoverCommand is the command that runs Recover on dir, as printed in
// ErrInterruptedApply messages.
func recoverCommand(dir string) string {
	return hint.Tool("refresh-cassettes", "-recover", "-dir", dir)
}

// interrupted returns an ErrInterruptedApply if dir holds the journal of
// an apply a killed process did not finish.
func interrupted(dir string) error {
	j := journalIn(dir)
	if j == "" {
		return nil
	}
	// A refresh may be moving files in right now, holding dir's lock:
	// once it can be taken, a journal still there is a killed refresh's.
	if l, err := lockDir(dir); err == nil {
		l.fl.Unlock()
		if j = journalIn(dir); j == "" {
			return nil
		}
	}
	what := "a refresh stopped part-way while it moved re-recorded cassettes into place (its process ended before it finished, without noting a failure: it was killed or crashed)"
	if cause := failureNote(filepath.Dir(j)); cause != "" {
		what = "a refresh failed part-way while it moved re-recorded cassettes into place (" + cause + ")"
	}
	return newErr(dir, 0, "verify", detailf(ErrInterruptedApply,
		"%v: %s; its journal is %s, so some cassettes may be new and others old; complete it with: %s",
		ErrInterruptedApply, what, j, recoverCommand(dir)))
}

// journalIn returns the journal of a staging folder of dir, or "".
func journalIn(dir string) string {
	for _, s := range stages(dir) {
		if _, err := os.Lstat(filepath.Join(s, journalName)); err == nil {
			return filepath.Join(s, journalName)
		}
	}
	return ""
}

// syncDir makes renames in dir durable, as far as the platform allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
