package cassettes

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

var day = 24 * time.Hour

// freshDir applies two cassettes recorded at t0 and returns the directory.
func freshDir(t *testing.T, t0 time.Time) string {
	t.Helper()
	dir := t.TempDir()
	reqB := reqA
	reqB.body = strings.Replace(reqA.body, `"a"`, `"b"`, 1)
	err := Apply(dir, []Update{
		{File: "a.yaml", Staged: stage(t, dir, "a", []plainReq{reqA}), RecordedAt: t0},
		{File: "b.yaml", Staged: stage(t, dir, "b", []plainReq{reqB}), RecordedAt: t0.Add(10 * day)},
	}, "not a time")
	require.NoError(t, err)
	return dir
}

func TestApplyKeepsTheRecordingTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.FixedZone("X", 3600))
	dir := freshDir(t, t0)
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Equal(t, "2026-01-01T11:00:00Z", m.Cassettes[0].RecordedAt, "UTC, from Update.RecordedAt")
	require.Equal(t, "2026-01-11T11:00:00Z", m.Cassettes[1].RecordedAt)

	// Recording the same content again: fresh, no history, limits kept.
	editManifest(t, dir, func(m *manifest.Manifest) { m.Cassettes[0].MaxAge = "30d" })
	again, err := NewStage(dir)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "a.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(again, "a.yaml"), raw, 0o644))
	require.NoError(t, Apply(dir, []Update{{File: "a.yaml", Staged: filepath.Join(again, "a.yaml")}}, "2026-03-01T00:00:00Z"))
	m, err = manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m.History, 2)
	require.Equal(t, "2026-03-01T00:00:00Z", m.Cassettes[0].RecordedAt, "from at, an RFC 3339 time")
	require.Equal(t, "30d", m.Cassettes[0].MaxAge)
	require.NoError(t, Verify(dir, VerifyConfig{}))
}

// TestFreshness: past max_age a cassette is warned about with the refresh
// command; past hard_max_age Verify fails; the manifest's Stale lists exactly the stale
// ones; the limits of an entry override the directory's.
func TestFreshness(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	refresh := func(path string) string { return "refresh " + filepath.Base(path) }
	tests := []struct {
		name      string
		edit      func(*manifest.Manifest)
		now       time.Time
		stale     []string // by file
		warnings  []string // substrings, one warning each
		expired   []string
		verifyErr bool
	}{
		{name: "no limits", edit: func(*manifest.Manifest) {}, now: t0.Add(1000 * day)},
		{name: "within the directory's limit", edit: func(m *manifest.Manifest) { m.MaxAge = "30d" }, now: t0.Add(30 * day)},
		{name: "past the directory's limit: a warning",
			edit: func(m *manifest.Manifest) { m.MaxAge = "30d" }, now: t0.Add(31 * day),
			stale: []string{"a.yaml"}, warnings: []string{"a.yaml: recorded 2026-01-01T00:00:00Z, 31d ago, past its maximum age of 30d; re-record it with: refresh a.yaml"}},
		{name: "an entry's own limit",
			edit: func(m *manifest.Manifest) { m.MaxAge = "300d"; m.Cassettes[1].MaxAge = "720h" }, now: t0.Add(41 * day),
			stale: []string{"b.yaml"}, warnings: []string{"b.yaml: recorded 2026-01-11T00:00:00Z, 31d ago, past its maximum age of 30d"}},
		{name: "past the hard limit: a failure",
			edit: func(m *manifest.Manifest) { m.MaxAge, m.HardMaxAge = "30d", "35d" }, now: t0.Add(41 * day),
			stale: []string{"a.yaml", "b.yaml"}, warnings: []string{"b.yaml: recorded 2026-01-11T00:00:00Z, 31d ago, past its maximum age of 30d"},
			expired: []string{"a.yaml"}, verifyErr: true},
		{name: "a hard limit alone",
			edit: func(m *manifest.Manifest) { m.Cassettes[0].HardMaxAge = "2d" }, now: t0.Add(3 * day),
			stale: []string{"a.yaml"}, expired: []string{"a.yaml"}, verifyErr: true},
		{name: "no recording time",
			edit: func(m *manifest.Manifest) { m.MaxAge = "30d"; m.Cassettes[0].RecordedAt = "" }, now: t0.Add(1 * day),
			stale: []string{"a.yaml"}, warnings: []string{"a.yaml: its recording time is unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := freshDir(t, t0)
			editManifest(t, dir, tt.edit)
			m, err := manifest.Read(filepath.Join(dir, manifest.Name))
			require.NoError(t, err)
			st := m.Stale(dir, tt.now, refresh)
			var files, expired []string
			for _, s := range st {
				files = append(files, s.File)
				if s.Expired {
					expired = append(expired, s.File)
				}
			}
			require.Equal(t, tt.stale, files)
			require.Equal(t, tt.expired, expired)

			var warn bytes.Buffer
			err = Verify(dir, VerifyConfig{Now: func() time.Time { return tt.now }, Warn: &warn, Refresh: refresh})
			lines := strings.Split(strings.TrimSuffix(warn.String(), "\n"), "\n")
			if warn.Len() == 0 {
				lines = nil
			}
			require.Len(t, lines, len(tt.warnings), warn.String())
			for i, w := range tt.warnings {
				require.Contains(t, lines[i], "warning: ")
				require.Contains(t, lines[i], w)
			}
			if !tt.verifyErr {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrExpired)
			require.ErrorContains(t, err, "past its hard maximum age")
			require.ErrorContains(t, err, "refresh a.yaml")
		})
	}
}

func TestManifestAgesAreChecked(t *testing.T) {
	for _, edit := range []func(*manifest.Manifest){
		func(m *manifest.Manifest) { m.MaxAge = "soon" },
		func(m *manifest.Manifest) { m.HardMaxAge = "-3d" },
		func(m *manifest.Manifest) { m.Cassettes[0].MaxAge = "0s" },
		func(m *manifest.Manifest) { m.Cassettes[1].RecordedAt = "yesterday" },
	} {
		dir := freshDir(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		editManifest(t, dir, edit)
		err := Verify(dir, VerifyConfig{})
		require.ErrorIs(t, err, manifest.ErrInvalid)
	}
}

// TestRecordFlagTakesTheResponseDate: a cassette re-recorded by the test
// flag is as old as the Date its server sent (before redaction replaced
// it), not the clock of whoever ran the test.
func TestRecordFlagTakesTheResponseDate(t *testing.T) {
	srv := echoServer(t) // Date: Sun, 22 Nov 2026 01:02:03 GMT
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	withFlags(t, `s\.happy`, false)
	c, err := Open(filepath.Join(dir, "s.happy.yaml"), Config{RealTransport: srv.Client().Transport})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, reqA))
	require.NoError(t, c.Close())
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Equal(t, "2026-11-22T01:02:03Z", m.Cassettes[0].RecordedAt)
}
