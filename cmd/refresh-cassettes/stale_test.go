package main

import (
	"os"
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
// as a version change.
func TestDryRunNamesAPIVersionChange(t *testing.T) {
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
