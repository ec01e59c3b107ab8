package fallback

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/codegenie/codegenie/prompt"
)

// ContextLines is the number of unchanged lines around each hunk of a
// canonical diff.
const ContextLines = 3

// TransformVersion names the canonical diff format below. It is part of
// every run's pin: changing the format changes every RunKey.
const TransformVersion = "codegenie-transform/v1"

// Transform is the change a run produces. DiffBytes is a canonical unified
// diff (see the package documentation): the same change to the same
// snapshot always gives the same bytes, whatever formatting the model used.
type Transform struct {
	DiffBytes []byte
}

// Canonicalize parses diff (any unified or git diff the go-gitdiff parser
// accepts), applies it to the repo's files and returns the canonical diff of
// the change. Only in-place edits of text files that exist in repo are
// accepted; anything else is an *UnusableCompletionError. Hunks must match
// the snapshot at the line numbers they give (no fuzz, no offsets), as with
// `git apply` without options.
//
// File names are resolved against the repo as given; if a name is not in
// the repo and has a leading directory (the "a/" and "b/" of a traditional
// diff), the name without it is tried. A file may appear several times; its
// patches apply in order.
func Canonicalize(repo RepoContext, diff []byte) (Transform, error) {
	fs, err := sortedFiles(repo.Files)
	if err != nil {
		return Transform{}, err
	}
	t, _, err := canonicalize(fs, diff)
	return t, err
}

// canonicalize is Canonicalize over the repo's files, already validated by
// sortedFiles. It also returns the changed paths, sorted.
func canonicalize(fs []prompt.File, diff []byte) (Transform, []string, error) {
	old := make(map[string][]byte, len(fs))
	for _, f := range fs {
		old[f.Path] = f.Content
	}
	unusable := func(reason, path, detail string) error {
		return &UnusableCompletionError{Reason: reason, Path: path, Detail: detail, Excerpt: excerpt(string(diff))}
	}

	files, err := parseDiff(diff)
	if err != nil {
		if errors.Is(err, ErrPanic) {
			return Transform{}, nil, err
		}
		return Transform{}, nil, unusable(ReasonMalformed, "", err.Error())
	}
	if len(files) == 0 {
		return Transform{}, nil, unusable(ReasonMalformed, "", "no file header (\"--- a/path\" and \"+++ b/path\") found in the diff")
	}

	cur := make(map[string][]byte)
	for _, f := range files {
		switch {
		case f.IsNew:
			return Transform{}, nil, unusable(ReasonUnsupported, f.NewName, "creates a file; only edits of existing files are accepted")
		case f.IsDelete:
			return Transform{}, nil, unusable(ReasonUnsupported, f.OldName, "deletes a file; only edits of existing files are accepted")
		case f.IsRename || f.IsCopy:
			return Transform{}, nil, unusable(ReasonUnsupported, f.OldName, "renames or copies a file; only edits in place are accepted")
		case f.IsBinary:
			return Transform{}, nil, unusable(ReasonUnsupported, f.OldName, "binary patch; only text edits are accepted")
		case f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode:
			return Transform{}, nil, unusable(ReasonUnsupported, f.OldName, "changes the file mode; only content edits are accepted")
		}
		p, ok := resolveName(old, f.OldName)
		if !ok {
			return Transform{}, nil, unusable(ReasonUnknownFile, displayName(f.OldName), "the file is not in the repo snapshot; patch only files shown in the prompt")
		}
		if q, ok := resolveName(old, f.NewName); !ok || q != p {
			return Transform{}, nil, unusable(ReasonUnsupported, f.NewName, fmt.Sprintf("old name %q and new name %q differ; only edits in place are accepted", f.OldName, f.NewName))
		}
		src, seen := cur[p]
		if !seen {
			src = old[p]
		}
		out, err := applyFile(src, f)
		if err != nil {
			if errors.Is(err, ErrPanic) {
				return Transform{}, nil, err
			}
			return Transform{}, nil, unusable(ReasonDoesNotApply, p, err.Error())
		}
		cur[p] = out
	}

	paths := make([]string, 0, len(cur))
	for p := range cur {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b bytes.Buffer
	var changed []string
	for _, p := range paths {
		if bytes.Equal(old[p], cur[p]) {
			continue
		}
		changed = append(changed, p)
		if err := writeFileDiff(&b, p, old[p], cur[p]); err != nil {
			return Transform{}, nil, unusable(ReasonNotCanonical, p, err.Error())
		}
	}
	if b.Len() == 0 {
		return Transform{}, nil, unusable(ReasonEmptyChange, "", "the diff applies but changes no file")
	}
	return Transform{DiffBytes: b.Bytes()}, changed, nil
}

// transformFromAnswer extracts the diff from a model answer and
// canonicalizes it against the repo's files fs (validated by sortedFiles).
// It also returns the changed paths.
func transformFromAnswer(fs []prompt.File, answer string) (Transform, []string, error) {
	var diff []byte
	err := catchPanic("parse answer", func() error {
		var perr error
		diff, perr = prompt.ParseAnswer(answer)
		return perr
	})
	switch {
	case errors.Is(err, ErrPanic):
		return Transform{}, nil, err
	case errors.Is(err, prompt.ErrNoDiff):
		return Transform{}, nil, &UnusableCompletionError{Reason: ReasonNoDiff, Detail: err.Error(), Excerpt: excerpt(answer)}
	case err != nil:
		return Transform{}, nil, &UnusableCompletionError{Reason: ReasonMalformed, Detail: err.Error(), Excerpt: excerpt(answer)}
	}
	t, paths, err := canonicalize(fs, diff)
	var uerr *UnusableCompletionError
	if errors.As(err, &uerr) {
		uerr.Excerpt = excerpt(answer)
	}
	return t, paths, err
}

// resolveName finds name in the repo, trying it as given and then without
// its first path element.
func resolveName(repo map[string][]byte, name string) (string, bool) {
	if _, ok := repo[name]; ok {
		return name, true
	}
	if _, rest, ok := strings.Cut(name, "/"); ok {
		if _, ok := repo[rest]; ok {
			return rest, true
		}
	}
	return "", false
}

// displayName strips the "a/" or "b/" prefix of a traditional diff from a
// name that is not in the repo, for error messages.
func displayName(name string) string {
	if rest, ok := strings.CutPrefix(name, "a/"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(name, "b/"); ok {
		return rest
	}
	return name
}

// parseDiff parses a unified or git diff, turning a parser panic into a
// *PanicError.
func parseDiff(diff []byte) (files []*gitdiff.File, err error) {
	err = catchPanic("parse diff", func() error {
		var perr error
		files, _, perr = gitdiff.Parse(bytes.NewReader(diff))
		return perr
	})
	return files, err
}

// applyFile applies one file's patch to src, turning an applier panic into
// a *PanicError.
func applyFile(src []byte, f *gitdiff.File) ([]byte, error) {
	var out bytes.Buffer
	err := catchPanic("apply diff", func() error {
		return gitdiff.Apply(&out, bytes.NewReader(src), f)
	})
	return out.Bytes(), err
}

// writeFileDiff appends the canonical diff of one file, or nothing if the
// contents are equal.
func writeFileDiff(b *bytes.Buffer, path string, before, after []byte) error {
	if bytes.Equal(before, after) {
		return nil
	}
	a, bn := quoteName("a/"+path), quoteName("b/"+path)
	oldLabel, newLabel := a, bn
	if strings.ContainsRune(path, ' ') {
		// git ends a name that contains a space with a tab on the ---/+++
		// lines, so that the name is unambiguous.
		oldLabel += "\t"
		newLabel += "\t"
	}
	edits := udiff.Lines(string(before), string(after))
	u, err := udiff.ToUnified(oldLabel, newLabel, string(before), edits, ContextLines)
	if err != nil {
		return err
	}
	b.WriteString("diff --git " + a + " " + bn + "\n")
	b.WriteString(u)
	return nil
}

// quoted are the bytes git escapes with a backslash and a letter (or the
// byte itself), given at the same index in quotedAs; other control bytes
// are escaped as three octal digits.
const (
	quoted   = "\"\\\a\b\t\n\v\f\r"
	quotedAs = `"\abtnvfr`
)

// quoteName quotes a path the way git does when it contains a double quote,
// a backslash or a control character; other names are returned unchanged.
func quoteName(name string) string {
	need := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c == 0x7f {
			need = true
			break
		}
	}
	if !need {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch j := strings.IndexByte(quoted, c); {
		case j >= 0:
			b.WriteByte('\\')
			b.WriteByte(quotedAs[j])
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Apply applies t to repo and returns the changed snapshot: the same files
// in the same order, with the patched contents. It is how a caller checks a
// Transform without git. An empty Transform returns repo unchanged.
func (t Transform) Apply(repo RepoContext) (RepoContext, error) {
	if len(t.DiffBytes) == 0 {
		return repo, nil
	}
	if _, err := sortedFiles(repo.Files); err != nil {
		return RepoContext{}, err
	}
	idx := make(map[string]int, len(repo.Files))
	out := RepoContext{Files: slices.Clone(repo.Files)}
	for i, f := range out.Files {
		idx[f.Path] = i
	}
	files, err := parseDiff(t.DiffBytes)
	if err != nil {
		return RepoContext{}, fmt.Errorf("fallback: apply transform: %w", err)
	}
	for _, f := range files {
		i, ok := idx[f.OldName]
		if !ok || f.NewName != f.OldName || f.IsNew || f.IsDelete || f.IsBinary {
			return RepoContext{}, fmt.Errorf("fallback: apply transform: file %q: not an in-place edit of a repo file", f.OldName)
		}
		b, err := applyFile(out.Files[i].Content, f)
		if err != nil {
			return RepoContext{}, fmt.Errorf("fallback: apply transform: file %q: %w", f.OldName, err)
		}
		out.Files[i].Content = b
	}
	return out, nil
}
