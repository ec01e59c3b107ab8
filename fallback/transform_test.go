package fallback_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/prompt"
	"github.com/stretchr/testify/require"
)

// gitApplyCheck runs `git apply --check` of diff against a fresh repo
// holding files, and then applies it and returns the changed contents.
func gitApplyCheck(t testing.TB, fs []prompt.File, diff []byte) map[string]string {
	t.Helper()
	needGit(t)
	dir := gitRepo(t, fs)
	patch := filepath.Join(t.TempDir(), "change.diff")
	require.NoError(t, os.WriteFile(patch, diff, 0o644))
	gitRun(t, dir, "apply", "--check", patch)
	gitRun(t, dir, "apply", patch)
	out := map[string]string{}
	for _, f := range fs {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		out[f.Path] = string(b)
	}
	return out
}

var pkgJSON = `{
  "name": "shop-api",
  "version": "1.4.0",
  "private": true,
  "scripts": {
    "start": "node src/server.js",
    "test": "jest"
  },
  "dependencies": {
    "express": "^4.18.2",
    "lodash": "4.17.20",
    "pino": "^8.15.0"
  },
  "devDependencies": {
    "jest": "^29.7.0"
  }
}
`

var serverJS = "const express = require('express');\nconst _ = require('lodash');\n\nconst app = express();\napp.get('/', (req, res) => res.json(_.pick(req.query, ['q'])));\nmodule.exports = app;\n"

func shopRepo() []prompt.File {
	return files("package.json", pkgJSON, "src/server.js", serverJS, "README.md", "# shop-api\n")
}

// The same change written the ways a model might write it.
var lodashBumps = []struct{ name, diff string }{
	{"git style with index line", `diff --git a/package.json b/package.json
index 3b18e51..a7c2f4d 100644
--- a/package.json
+++ b/package.json
@@ -8,7 +8,7 @@
   },
   "dependencies": {
     "express": "^4.18.2",
-    "lodash": "4.17.20",
+    "lodash": "4.17.21",
     "pino": "^8.15.0"
   },
   "devDependencies": {
`},
	{"traditional with a/ b/ and timestamps", "--- a/package.json\t2024-01-01 00:00:00.000000000 +0000\n+++ b/package.json\t2024-01-02 00:00:00.000000000 +0000\n" + `@@ -10,3 +10,3 @@
     "express": "^4.18.2",
-    "lodash": "4.17.20",
+    "lodash": "4.17.21",
     "pino": "^8.15.0"
`},
	{"bare names, one context line", `--- package.json
+++ package.json
@@ -11 +11 @@
-    "lodash": "4.17.20",
+    "lodash": "4.17.21",
`},
	{"hunk comment and extra context", `diff --git a/package.json b/package.json
--- a/package.json
+++ b/package.json
@@ -7,11 +7,11 @@ "private": true,
     "test": "jest"
   },
   "dependencies": {
     "express": "^4.18.2",
-    "lodash": "4.17.20",
+    "lodash": "4.17.21",
     "pino": "^8.15.0"
   },
   "devDependencies": {
     "jest": "^29.7.0"
   }
 }
`},
	{"remove and re-add context line", `--- a/package.json
+++ b/package.json
@@ -10,3 +10,3 @@
-    "express": "^4.18.2",
-    "lodash": "4.17.20",
+    "express": "^4.18.2",
+    "lodash": "4.17.21",
     "pino": "^8.15.0"
`},
}

func TestCanonicalizeIsFormatIndependent(t *testing.T) {
	repo := fallback.RepoContext{Files: shopRepo()}
	var first []byte
	for _, tc := range lodashBumps {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := fallback.Canonicalize(repo, []byte(tc.diff))
			require.NoError(t, err)
			if first == nil {
				first = tr.DiffBytes
			}
			require.Equal(t, string(first), string(tr.DiffBytes))
		})
	}
	want := `diff --git a/package.json b/package.json
--- a/package.json
+++ b/package.json
@@ -8,7 +8,7 @@
   },
   "dependencies": {
     "express": "^4.18.2",
-    "lodash": "4.17.20",
+    "lodash": "4.17.21",
     "pino": "^8.15.0"
   },
   "devDependencies": {
`
	require.Equal(t, want, string(first), "canonical form: diff --git header, a/ b/ labels, %d context lines", fallback.ContextLines)
}

func TestCanonicalizeIsIdempotent(t *testing.T) {
	repo := fallback.RepoContext{Files: shopRepo()}
	tr, err := fallback.Canonicalize(repo, []byte(lodashBumps[1].diff))
	require.NoError(t, err)
	again, err := fallback.Canonicalize(repo, tr.DiffBytes)
	require.NoError(t, err)
	require.Equal(t, string(tr.DiffBytes), string(again.DiffBytes))
}

// Edge-case files: every canonical diff must satisfy git apply and give the
// same result as applying it with go-gitdiff.
func TestCanonicalDiffGitApply(t *testing.T) {
	long := strings.Repeat("line\n", 40)
	for _, tc := range []struct {
		name          string
		before, after []prompt.File
	}{
		{"npm bump", shopRepo(), files("package.json", strings.Replace(pkgJSON, "4.17.20", "4.17.21", 1), "src/server.js", serverJS, "README.md", "# shop-api\n")},
		{"two files sorted", files("z.txt", "a\nb\n", "a/y.txt", "1\n2\n"), files("z.txt", "a\nB\n", "a/y.txt", "1\n2\n3\n")},
		{"no newline at end, edited", files("f", "a\nb"), files("f", "a\nc")},
		{"no newline at end, added", files("f", "a\nb"), files("f", "a\nb\n")},
		{"newline at end removed", files("f", "a\nb\n"), files("f", "a\nb")},
		{"empty file filled", files("f", "", "g", "x\n"), files("f", "new\n", "g", "x\n")},
		{"file emptied", files("f", "a\nb\n"), files("f", "")},
		{"crlf", files("f", "a\r\nb\r\nc\r\n"), files("f", "a\r\nB\r\nc\r\n")},
		{"two hunks", files("f", "top\n"+long+"bottom\n"), files("f", "TOP\n"+long+"BOTTOM\n")},
		{"name with space", files("dir x/my file.txt", "a\n"), files("dir x/my file.txt", "b\n")},
		{"name with quote", files(`we"ird.txt`, "a\n"), files(`we"ird.txt`, "b\n")},
		{"unicode name", files("é/ü.txt", "a\n"), files("é/ü.txt", "b\n")},
		{"tricky order", files("a.b", "1\n", "a/b", "2\n"), files("a.b", "one\n", "a/b", "two\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff := naiveDiff(t, tc.before, tc.after)
			repo := fallback.RepoContext{Files: tc.before}
			tr, err := fallback.Canonicalize(repo, diff)
			require.NoError(t, err, "input diff:\n%s", diff)

			applied, err := tr.Apply(repo)
			require.NoError(t, err)
			require.Equal(t, contents(tc.after), contents(applied.Files), "go-gitdiff apply of\n%s", tr.DiffBytes)

			if _, err := exec.LookPath("git"); err == nil {
				got := gitApplyCheck(t, tc.before, tr.DiffBytes)
				require.Equal(t, contents(tc.after), got, "git apply of\n%s", tr.DiffBytes)
			}
		})
	}
}

func contents(fs []prompt.File) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Path] = string(f.Content)
	}
	return m
}

// naiveDiff writes a whole-file replacement diff (every old line removed,
// every new line added) without a diff library, as a sloppy model would.
func naiveDiff(t testing.TB, before, after []prompt.File) []byte {
	t.Helper()
	var b bytes.Buffer
	old := contents(before)
	for _, f := range after {
		o := old[f.Path]
		if o == string(f.Content) {
			continue
		}
		ol, nl := splitKeep(o), splitKeep(string(f.Content))
		b.WriteString("--- a/" + f.Path + "\n+++ b/" + f.Path + "\n")
		ostart, nstart := 1, 1
		if len(ol) == 0 {
			ostart = 0
		}
		if len(nl) == 0 {
			nstart = 0
		}
		b.WriteString("@@ -" + itoa(ostart) + "," + itoa(len(ol)) + " +" + itoa(nstart) + "," + itoa(len(nl)) + " @@\n")
		for _, l := range ol {
			writeLine(&b, "-", l)
		}
		for _, l := range nl {
			writeLine(&b, "+", l)
		}
	}
	return b.Bytes()
}

func writeLine(b *bytes.Buffer, prefix, l string) {
	b.WriteString(prefix + l)
	if !strings.HasSuffix(l, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

func splitKeep(s string) []string {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCanonicalizeUnusable(t *testing.T) {
	repo := fallback.RepoContext{Files: shopRepo()}
	for _, tc := range []struct {
		name, diff, reason string
	}{
		{"garbage", "this is not a diff\n", fallback.ReasonMalformed},
		{"bad hunk header", "--- a/package.json\n+++ b/package.json\n@@ -x +y @@\n-a\n+b\n", fallback.ReasonMalformed},
		{"unknown file", "--- a/yarn.lock\n+++ b/yarn.lock\n@@ -1 +1 @@\n-a\n+b\n", fallback.ReasonUnknownFile},
		{"new file", "diff --git a/new.js b/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/new.js\n@@ -0,0 +1 @@\n+x\n", fallback.ReasonUnsupported},
		{"delete file", "diff --git a/README.md b/README.md\ndeleted file mode 100644\n--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# shop-api\n", fallback.ReasonUnsupported},
		{"rename", "diff --git a/README.md b/README.txt\nsimilarity index 100%\nrename from README.md\nrename to README.txt\n", fallback.ReasonUnsupported},
		{"mode change", "diff --git a/README.md b/README.md\nold mode 100644\nnew mode 100755\n", fallback.ReasonUnsupported},
		{"does not apply", "--- a/package.json\n+++ b/package.json\n@@ -12 +12 @@\n-    \"lodash\": \"4.17.19\",\n+    \"lodash\": \"4.17.21\",\n", fallback.ReasonDoesNotApply},
		{"wrong line number", "--- a/package.json\n+++ b/package.json\n@@ -3 +3 @@\n-    \"lodash\": \"4.17.20\",\n+    \"lodash\": \"4.17.21\",\n", fallback.ReasonDoesNotApply},
		{"beyond end of file", "--- a/README.md\n+++ b/README.md\n@@ -5 +5 @@\n-x\n+y\n", fallback.ReasonDoesNotApply},
		{"empty change", "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# shop-api\n+# shop-api\n", fallback.ReasonEmptyChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fallback.Canonicalize(repo, []byte(tc.diff))
			require.ErrorIs(t, err, fallback.ErrUnusableCompletion)
			var uerr *fallback.UnusableCompletionError
			require.ErrorAs(t, err, &uerr)
			require.Equal(t, tc.reason, uerr.Reason, "%v", err)
			require.LessOrEqual(t, len(uerr.Excerpt), fallback.MaxExcerpt)
		})
	}
}

func TestCanonicalizeBoundsExcerpt(t *testing.T) {
	repo := fallback.RepoContext{Files: shopRepo()}
	huge := "--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-" + strings.Repeat("é", 4000) + "\n+x\n"
	_, err := fallback.Canonicalize(repo, []byte(huge))
	var uerr *fallback.UnusableCompletionError
	require.ErrorAs(t, err, &uerr)
	require.LessOrEqual(t, len(uerr.Excerpt), fallback.MaxExcerpt)
	require.True(t, strings.HasPrefix(huge, uerr.Excerpt))
	require.True(t, utf8.ValidString(uerr.Excerpt))
}

// A file patched twice in one answer gets both patches, in order, and one
// canonical file diff.
func TestCanonicalizeSameFileTwice(t *testing.T) {
	repo := fallback.RepoContext{Files: files("f", "a\nb\nc\n")}
	diff := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n--- a/f\n+++ b/f\n@@ -3 +3 @@\n-c\n+C\n"
	tr, err := fallback.Canonicalize(repo, []byte(diff))
	require.NoError(t, err)
	require.Equal(t, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n-c\n+C\n", string(tr.DiffBytes))
}

// Names resolve with or without the traditional a/ b/ prefixes, also for
// a repo whose top directory is called "a".
func TestCanonicalizeResolvesNames(t *testing.T) {
	repo := fallback.RepoContext{Files: files("a/x.txt", "1\n", "y.txt", "2\n")}
	want := "diff --git a/a/x.txt b/a/x.txt\n--- a/a/x.txt\n+++ b/a/x.txt\n@@ -1 +1 @@\n-1\n+one\n"
	for _, d := range []string{
		"--- a/a/x.txt\n+++ b/a/x.txt\n@@ -1 +1 @@\n-1\n+one\n",
		"--- a/x.txt\n+++ a/x.txt\n@@ -1 +1 @@\n-1\n+one\n",
		"diff --git a/a/x.txt b/a/x.txt\n--- a/a/x.txt\n+++ b/a/x.txt\n@@ -1 +1 @@\n-1\n+one\n",
	} {
		tr, err := fallback.Canonicalize(repo, []byte(d))
		require.NoError(t, err, d)
		require.Equal(t, want, string(tr.DiffBytes))
	}
}
