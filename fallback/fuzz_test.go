package fallback_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/prompt"
)

// FuzzCanonicalize feeds arbitrary diffs to Canonicalize and
// Transform.Apply, against the shop repo plus a file "f" of arbitrary
// content. Neither may panic. A rejected diff gives an
// *UnusableCompletionError with a known reason and an excerpt that is a
// bounded prefix of the diff (or a *PanicError the diff library's panic
// was turned into). An accepted diff gives a canonical diff that
//   - is a fixed point: canonicalizing it again gives the same bytes;
//   - applies to the repo with Transform.Apply, keeping its files and order;
//   - names exactly the files whose contents changed, in path order;
//   - is what the same change canonicalizes to when written as whole-file
//     replacements: the bytes depend on the change, not on how the diff
//     was written.
func FuzzCanonicalize(f *testing.F) {
	const abc = "a\nb\nc\n"
	for _, b := range lodashBumps {
		f.Add([]byte(abc), []byte(b.diff))
	}
	f.Add([]byte(abc), []byte("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n--- a/f\n+++ b/f\n@@ -3 +3 @@\n-c\n+C\n"))
	f.Add([]byte("a\nb"), []byte("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"))
	f.Add([]byte(""), []byte("--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+new\n"))
	f.Add([]byte("a\r\nb\r\n"), []byte("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n"))
	f.Add([]byte(abc), []byte("diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\n"))
	f.Add([]byte(abc), []byte("--- a/f\n+++ b/f\n@@ -7 +7 @@\n-x\n+y\n"))
	f.Add([]byte(abc), []byte("this is not a diff\n"))
	f.Fuzz(func(t *testing.T, content, diff []byte) {
		repo := fallback.RepoContext{Files: append(shopRepo(), prompt.File{Path: "f", Content: content})}

		// Any bytes given to Apply as a Transform: an error or a snapshot
		// of the same files, never a panic.
		if out, err := (fallback.Transform{DiffBytes: diff}).Apply(repo); err == nil {
			require.Equal(t, paths(repo.Files), paths(out.Files))
		}

		tr, err := fallback.Canonicalize(repo, diff)
		if err != nil {
			checkRejection(t, diff, err)
			return
		}
		require.NotEmpty(t, tr.DiffBytes)
		again, err := fallback.Canonicalize(repo, tr.DiffBytes)
		require.NoError(t, err, "the canonical diff is refused:\n%s", tr.DiffBytes)
		require.Equal(t, string(tr.DiffBytes), string(again.DiffBytes), "canonicalizing twice changes the diff")

		applied, err := tr.Apply(repo)
		require.NoError(t, err, "the canonical diff does not apply:\n%s", tr.DiffBytes)
		require.Equal(t, paths(repo.Files), paths(applied.Files))
		var changed []string
		for i, f := range repo.Files {
			if !bytes.Equal(f.Content, applied.Files[i].Content) {
				changed = append(changed, f.Path)
			}
		}
		slices.Sort(changed)
		require.Equal(t, changed, diffPaths(tr.DiffBytes))

		whole, err := fallback.Canonicalize(repo, naiveDiff(t, repo.Files, applied.Files))
		require.NoError(t, err)
		require.Equal(t, string(tr.DiffBytes), string(whole.DiffBytes), "the same change written another way canonicalizes differently")
	})
}

// checkRejection checks the error for a diff Canonicalize refused.
func checkRejection(t *testing.T, diff []byte, err error) {
	t.Helper()
	var uerr *fallback.UnusableCompletionError
	if !errors.As(err, &uerr) {
		require.ErrorIs(t, err, fallback.ErrPanic, "a refusal is an unusable completion or a recovered panic: %v", err)
		return
	}
	require.Contains(t, []string{
		fallback.ReasonMalformed, fallback.ReasonUnknownFile, fallback.ReasonUnsupported,
		fallback.ReasonDoesNotApply, fallback.ReasonEmptyChange, fallback.ReasonNotCanonical,
	}, uerr.Reason)
	require.LessOrEqual(t, len(uerr.Excerpt), fallback.MaxExcerpt)
	require.True(t, bytes.HasPrefix(diff, []byte(uerr.Excerpt)), "the excerpt is not a prefix of the diff")
}

func paths(fs []prompt.File) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// diffPaths returns the paths of the "diff --git a/P b/P" headers of a
// canonical diff over plain path names, in order.
func diffPaths(diff []byte) []string {
	var out []string
	for _, l := range strings.Split(string(diff), "\n") {
		if rest, ok := strings.CutPrefix(l, "diff --git a/"); ok {
			p, _, _ := strings.Cut(rest, " b/")
			out = append(out, p)
		}
	}
	return out
}
