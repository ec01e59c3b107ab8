package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/codegenie/codegenie/internal/safename"
)

// readReview reads the JSON review a refresh wrote into dir.
func readReview(t *testing.T, dir string) review.Review {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "review.json"))
	require.NoError(t, err)
	var r review.Review
	require.NoError(t, json.Unmarshal(b, &r))
	md, err := os.ReadFile(filepath.Join(dir, "review.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "### Cassette review")
	return r
}

func TestRefreshWritesTheReview(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir, out := t.TempDir(), t.TempDir()
	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy", "-review", out)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "refresh-cassettes: review (also in "+filepath.Join(out, "review.md"))
	require.Contains(t, stdout, "### Cassette review: **drifted**")
	require.Equal(t, 1, readReview(t, out).Counts[review.New])

	goldens := t.TempDir()
	old, err := cassettes.Digest(filepath.Join(dir, "npm-lodash.happy.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(goldens, "g.json"), []byte(old), 0o644))
	changed := cfg
	changed.transport = rewriting(cfg.transport)
	stdout, stderr, code = runCmd(t, changed, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy", "-review", out,
		"-force", "-reason", "new snapshot", "-goldens", goldens, "-golden-cmd", "make goldens")
	require.Equal(t, 0, code, stderr)
	r := readReview(t, out)
	require.Equal(t, 1, r.Counts[review.Content])
	require.True(t, r.Drifted)
	require.Equal(t, []review.Golden{{Path: filepath.ToSlash(filepath.Join(goldens, "g.json")), Cassettes: []string{"npm-lodash.happy.yaml"}}}, r.Goldens)
	require.Contains(t, stdout, "Refresh them with:\n\n```sh\nmake goldens\n```")
	require.Contains(t, stdout, "make goldens\nthen review the diff")
}

// editStaged rewrites the staged cassette's lines holding marker,
// replacing old by new: a staged cassette that no longer replays to what
// was recorded.
func editStaged(marker, old, new string) func(string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(b), "\n")
		for i, l := range lines {
			if strings.Contains(l, marker) {
				lines[i] = strings.ReplaceAll(l, old, new)
			}
		}
		return os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
	}
}

// TestParityRefusesADivergentStagedCassette: a staged cassette whose
// replay diverges from its recording is refused with the divergence
// report, and nothing is applied.
func TestParityRefusesADivergentStagedCassette(t *testing.T) {
	tests := []struct {
		name   string
		inject func(string) error
		report []string
	}{
		{"the request varies between recording and replay",
			editStaged(`body: '{"max_tokens":2048`, `"max_tokens":2048`, `"max_tokens":2047`),
			[]string{"every replay missed the staged cassette: the pipeline's request varies between recording and replay", "BROKEN", "cassette-miss", `["max_tokens"]: 2047 != 2048`,
				"re-recording would only bake in one variant"}},
		{"the replay gives another outcome",
			editStaged(`"id":"msg_fake_`, `^4.17.21`, `^4.17.22`),
			[]string{"all 20 replays gave one outcome", "but not the recording's", "recorded: ", "4.17.21", "replayed: ", "4.17.22"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, cfg := fakeAPI(t)
			dir, out := t.TempDir(), t.TempDir()
			_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy", "-review", out)
			require.Equal(t, 0, code, stderr)
			before := snapshot(t, dir)

			cfg.afterRecord = tt.inject
			stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy", "-review", out, "-force", "-reason", "r")
			require.Equal(t, 1, code, stdout)
			require.Contains(t, stderr, "parity: a staged cassette does not replay to its recording's outcome")
			require.Contains(t, stderr, "nothing was changed in "+dir)
			reportPath := filepath.Join(out, "parity-"+safename.Of("npm-lodash/happy")+".txt")
			require.Contains(t, stdout, "divergence report (also in "+reportPath)
			report, err := os.ReadFile(reportPath)
			require.NoError(t, err)
			for _, want := range tt.report {
				require.Contains(t, string(report), want)
			}
			require.NotContains(t, string(report), "re-record it", "the cassette was just recorded: the report must not advise recording it again")
			require.Equal(t, before, snapshot(t, dir), "nothing applied, staging removed")
			require.NoError(t, cassettes.Verify(dir, cassettes.VerifyOptions{}))
		})
	}
}

// TestCheck: -check records into a staging folder, prints the review,
// applies nothing, and exits 3 when anything drifted, 0 when not.
func TestCheck(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-check")
	require.Equal(t, 3, code, stderr)
	require.Contains(t, stdout, "### Cassette review: **drifted**")
	require.Contains(t, stderr, "drifted")
	require.Empty(t, snapshot(t, dir), "nothing applied")

	_, stderr, code = runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	before := snapshot(t, dir)
	stdout, stderr, code = runCmd(t, cfg, "-dir", dir, "-base-url", base, "-check")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "### Cassette review: no drift")
	require.Contains(t, stdout, "-check: nothing drifted")

	changed := cfg
	changed.transport = rewriting(cfg.transport)
	_, _, code = runCmd(t, changed, "-dir", dir, "-base-url", base, "-check", "-run", "go-xnet/happy")
	require.Equal(t, 3, code)
	require.Equal(t, before, snapshot(t, dir))

	_, stderr, code = runCmd(t, cfg, "-dir", dir, "-check", "-force", "-reason", "x")
	require.Equal(t, 2, code, "-check applies nothing: -force makes no sense")
	require.Contains(t, stderr, "-check records and reviews only")
}

// TestExpired: -expired selects exactly the cassettes past their maximum
// age, judged at the command's clock against the recording times the
// manifest keeps.
func TestExpired(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	for _, e := range m.Cassettes {
		require.Equal(t, fixedNow().Format(time.RFC3339), e.RecordedAt)
	}

	// npm-lodash/retry may be 2 days old, every other cassette 30 days.
	path := filepath.Join(dir, manifest.Name)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	raw["max_age"] = "30d"
	for _, e := range raw["cassettes"].([]any) {
		if e := e.(map[string]any); e["file"] == "npm-lodash.retry.yaml" {
			e["max_age"] = "2d"
		}
	}
	b, err = json.Marshal(raw)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))

	later := cfg
	later.now = func() time.Time { return fixedNow().Add(3 * 24 * time.Hour) }
	stdout, stderr, code := runCmd(t, later, "-dir", dir, "-expired", "-dry-run")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "would record 1 cassettes")
	require.Contains(t, stdout, "npm-lodash/retry")

	stdout, stderr, code = runCmd(t, later, "-dir", dir, "-recover")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "warning: "+filepath.Join(dir, "npm-lodash.retry.yaml")+": recorded 2026-11-22T03:00:00Z, 3d ago, past its maximum age of 2d")

	stdout, stderr, code = runCmd(t, later, "-dir", dir, "-base-url", base, "-expired")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "[1/1] npm-lodash/retry: recording")
	m, err = manifest.Read(path)
	require.NoError(t, err)
	e, _ := m.Lookup("npm-lodash.retry.yaml")
	require.Equal(t, "2026-11-25T03:00:00Z", e.RecordedAt, "fresh again, by the recording's clock")
	require.Equal(t, "2d", e.MaxAge, "the limit is kept")

	stdout, stderr, code = runCmd(t, later, "-dir", dir, "-base-url", base, "-expired")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no cassette in "+dir+` matching -run "" is past its maximum age`)
}

// When neither review file can be written, the refresh fails on the
// first, review.md, every time.
func TestReviewWriteFailsOnTheFirstFile(t *testing.T) {
	base, cfg := fakeAPI(t)
	out := t.TempDir()
	for _, name := range []string{"review.md", "review.json"} {
		require.NoError(t, os.MkdirAll(filepath.Join(out, name, "in-the-way"), 0o755))
	}
	for range 12 {
		_, stderr, code := runCmd(t, cfg, "-dir", t.TempDir(), "-base-url", base, "-run", "npm-lodash/happy", "-review", out)
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "review.md")
		require.NotContains(t, stderr, "review.json")
	}
}
