package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cassetteBlock is a cassette's text from the line that starts with
// name to the next cassette's name or the closing line of -dry-run.
func cassetteBlock(t testing.TB, out, name string) string {
	t.Helper()
	_, block, ok := strings.Cut(out, "\n"+name+"\n")
	require.True(t, ok, "%s is listed:\n%s", name, out)
	if i := strings.Index(block, "\n\n"); i >= 0 {
		block = block[:i]
	}
	return block
}

// TestDryRunNamesAPIVersionChange: in a team's module whose Anthropic
// cassette was recorded with an older anthropic-version than the
// anthropic-sdk-go the module now builds with sends, refresh-cassettes
// -dry-run lists that cassette as stale because the SDK's API version
// changed, from what to what, once; the OpenAI cassette, which replays,
// is not listed as stale; nothing in the module changes. A cassette
// whose requests changed otherwise is listed as missing in replay, not
// as a version change. The command -dry-run prints re-records the
// stale cassette.
func TestDryRunNamesAPIVersionChange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and tests a separate module")
	}
	dir, sh, bin := teamModule(t)
	if runtime.GOOS == "windows" {
		t.Skip("the module's commands run under sh")
	}
	out, code := sh(false, "go test ./... -cassettes.record=.")
	require.Zero(t, code, out)

	// The recording as an older SDK would have made it.
	review := filepath.Join(dir, "review", "testdata", "review.yaml")
	b, err := os.ReadFile(review)
	require.NoError(t, err)
	version := regexp.MustCompile(`(?m)^(\s+Anthropic-Version:\n\s+- "?)([0-9-]+)("?)$`)
	m := version.FindSubmatch(b)
	require.NotNil(t, m, "the recording holds the anthropic-version its SDK sent:\n%s", b)
	sent := string(m[2])
	require.NotEqual(t, "2023-06-01", sent)
	require.NoError(t, os.WriteFile(review, version.ReplaceAll(b, []byte("${1}2023-06-01${3}")), 0o644))

	before := tree(t, dir)
	out, code = sh(false, bin+" -dry-run 2>/dev/null")
	require.Zero(t, code, out)
	require.Equal(t, before, tree(t, dir), "-dry-run changes nothing")
	t.Logf("-dry-run:\n%s", out)
	rev := cassetteBlock(t, out, "review/testdata/review.yaml")
	require.Contains(t, rev, "    stale:       its SDK's API version changed since it was recorded")
	require.Equal(t, 1, strings.Count(rev, `header Anthropic-Version "2023-06-01" != "`+sent+`"`), rev)
	require.NotContains(t, rev, "misses:")
	sum := cassetteBlock(t, out, "summarise/testdata/summarise.yaml")
	require.NotContains(t, sum, "stale:")
	require.NotContains(t, sum, "misses:")

	// The command it prints re-records the stale cassette alone, and
	// then nothing is stale.
	const tool = "go run github.com/codegenie/codegenie/cmd/refresh-cassettes"
	require.Contains(t, out, "refresh-cassettes: re-record the cassettes stale because their SDK's API version changed with:\n\t"+tool+" review/testdata/review.yaml\n")
	out, code = sh(false, bin+" review/testdata/review.yaml 2>/dev/null")
	require.Zero(t, code, out)
	require.Contains(t, out, "refresh-cassettes: applied 1 cassettes:\n  review/testdata/review.yaml\n")
	b, err = os.ReadFile(review)
	require.NoError(t, err)
	require.Equal(t, sent, string(version.FindSubmatch(b)[2]), "re-recorded with the version the SDK sends")
	out, code = sh(false, bin+" -dry-run 2>/dev/null")
	require.Zero(t, code, out)
	require.NotContains(t, out, "stale:")
	require.NotContains(t, out, "misses:")
	require.NotContains(t, out, "re-record")

	// A request change is a miss, not a version change.
	src := filepath.Join(dir, "summarise", "summarise.go")
	b, err = os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, []byte(strings.Replace(string(b), `"summarise: "`, `"summarize: "`, 1)), 0o644))
	out, code = sh(false, bin+" -dry-run -pkg ./summarise 2>/dev/null")
	require.Zero(t, code, out)
	sum = cassetteBlock(t, out, "summarise/testdata/summarise.yaml")
	require.Contains(t, sum, "    misses:      a request of its tests found no recorded interaction in replay")
	require.NotContains(t, sum, "stale:")
}

// TestLiteralPattern: the pattern -dry-run's command names a stale
// cassette by matches its path and no other, whatever characters the
// path holds that path.Match reads as a pattern.
func TestLiteralPattern(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, path, other string }{
		{"plain", "review/testdata/review.yaml", "review/testdata/review2.yaml"},
		{"a star", "a/testdata/x*.yaml", "a/testdata/xy.yaml"},
		{"a question mark", "a/testdata/x?.yaml", "a/testdata/xy.yaml"},
		{"a bracket", "a/testdata/[x].yaml", "a/testdata/x.yaml"},
		{"a backslash", `a/testdata/x\y.yaml`, "a/testdata/xy.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := literalPattern(tt.path)
			ok, err := path.Match(p, tt.path)
			require.NoError(t, err)
			require.True(t, ok, p)
			ok, err = path.Match(p, tt.other)
			require.NoError(t, err)
			require.False(t, ok, p)
		})
	}
}
