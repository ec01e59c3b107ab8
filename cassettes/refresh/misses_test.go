package refresh

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/refreshenv"
)

// TestNoteMisses: a cassette whose every miss differed from its
// recording only in the API version lists those changes, sorted, once
// each, whatever order they came in; one miss of another kind makes it
// only Missed; a cassette without a miss, or a miss outside the module,
// marks nothing.
func TestNoteMisses(t *testing.T) {
	root := t.TempDir()
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	const header = `header Anthropic-Version "2023-06-01" != "2026-10-21"`
	const url = `url https://api.anthropic.com/v1/messages?beta=true != https://api.anthropic.com/v1/messages`
	tests := []struct {
		name   string
		misses []refreshenv.Missed
		want   Cassette
	}{
		{"no miss", nil, Cassette{Path: "a/testdata/x.yaml"}},
		{"version changes, sorted once each", []refreshenv.Missed{
			{Missed: abs("a/testdata/x.yaml"), VersionChange: url},
			{Missed: abs("a/testdata/x.yaml"), VersionChange: header},
			{Missed: abs("a/testdata/x.yaml"), VersionChange: url},
		}, Cassette{Path: "a/testdata/x.yaml", Missed: true, VersionChanges: []string{header, url}}},
		{"another miss first", []refreshenv.Missed{
			{Missed: abs("a/testdata/x.yaml")},
			{Missed: abs("a/testdata/x.yaml"), VersionChange: header},
		}, Cassette{Path: "a/testdata/x.yaml", Missed: true}},
		{"another miss last", []refreshenv.Missed{
			{Missed: abs("a/testdata/x.yaml"), VersionChange: header},
			{Missed: abs("a/testdata/x.yaml")},
		}, Cassette{Path: "a/testdata/x.yaml", Missed: true}},
		{"another cassette's miss", []refreshenv.Missed{
			{Missed: abs("a/testdata/y.yaml"), VersionChange: header},
		}, Cassette{Path: "a/testdata/x.yaml"}},
		{"a miss outside the module", []refreshenv.Missed{
			{Missed: filepath.Join(t.TempDir(), "x.yaml"), VersionChange: header},
		}, Cassette{Path: "a/testdata/x.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := []Cassette{{Path: "a/testdata/x.yaml"}}
			(&resolved{root: root}).noteMisses(found, tt.misses)
			require.Equal(t, []Cassette{tt.want}, found)
		})
	}
}
