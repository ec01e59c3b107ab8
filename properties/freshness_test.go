package properties

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/hint"
)

// freshnessWarnings holds the gate's freshness warnings, which TestMain
// prints after the summary.
var freshnessWarnings atomic.Value

// checkFreshness verifies dir at now: warnings (cassettes past their
// maximum age, each with the command that re-records it) are returned; a
// cassette past its hard maximum age is an error. The gate never
// re-records on its own.
func checkFreshness(dir string, now time.Time) (string, error) {
	var warn strings.Builder
	err := cassettes.Verify(dir, cassettes.VerifyConfig{
		Now:     func() time.Time { return now },
		Warn:    &warn,
		Refresh: func(string) string { return hint.Tool("refresh-cassettes", "-expired") },
	})
	return warn.String(), err
}

// TestCassettesFresh judges the committed cassettes' ages at the time the
// gate runs (the one place the gate reads the wall clock; no digest
// depends on it): past a maximum age it warns, past a hard maximum age it
// fails.
func TestCassettesFresh(t *testing.T) {
	warn, err := checkFreshness(cassetteDir, time.Now())
	if warn != "" {
		t.Log(warn)
		freshnessWarnings.Store(warn)
	}
	require.NoError(t, err)
}

// TestFreshnessCheckWarnsThenFails: the gate's check on a directory whose
// cassette passes its maximum age, then its hard maximum age.
func TestFreshnessCheckWarnsThenFails(t *testing.T) {
	dir := t.TempDir()
	recorded := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stage, err := cassettes.NewStage(dir)
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(cassetteDir, "npm-lodash.happy.yaml"))
	require.NoError(t, err)
	staged := filepath.Join(stage, "npm-lodash.happy.yaml")
	require.NoError(t, os.WriteFile(staged, src, 0o644))
	err = cassettes.Apply(dir, []cassettes.Update{{File: "npm-lodash.happy.yaml", Staged: staged, RecordedAt: recorded}}, "")
	require.NoError(t, err)
	setAges(t, dir, "30d", "90d")

	warn, err := checkFreshness(dir, recorded.Add(10*24*time.Hour))
	require.NoError(t, err)
	require.Empty(t, warn)

	warn, err = checkFreshness(dir, recorded.Add(31*24*time.Hour))
	require.NoError(t, err)
	require.Contains(t, warn, "npm-lodash.happy.yaml: recorded 2026-01-01T00:00:00Z, 31d ago, past its maximum age of 30d")
	require.Contains(t, warn, hint.Tool("refresh-cassettes", "-expired"))

	_, err = checkFreshness(dir, recorded.Add(91*24*time.Hour))
	require.ErrorIs(t, err, cassettes.ErrExpired)
	require.ErrorContains(t, err, hint.Tool("refresh-cassettes", "-expired"))
}

// setAges sets the directory-wide age limits in dir's manifest, as a
// steward does by hand.
func setAges(t *testing.T, dir, maxAge, hardMaxAge string) {
	t.Helper()
	path := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["max_age"], m["hard_max_age"] = maxAge, hardMaxAge
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}
