package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

const dummyKey = "sk-ant-api03-dummy-recording-key-for-tests-0123456789"

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC) }

// fakeAPI serves fakellm on loopback (requiring the dummy key) and returns
// its URL and a config that records against it.
func fakeAPI(t testing.TB) (string, config) {
	t.Helper()
	srv, _ := fakellm.NewHTTPTest(t, fakellm.Config{APIKey: dummyKey})
	return srv.URL, config{apiKey: dummyKey, transport: srv.Client().Transport, now: fixedNow, reviewRoot: t.TempDir()}
}

func runCmd(t testing.TB, cfg config, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := cfg.run(context.Background(), args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// snapshot maps the names in dir to their bytes ("<dir>" for a folder),
// leaving out the folder of the directory's refresh lock, which stays (git
// ignores it).
func snapshot(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == ".refresh.lock" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if e.IsDir() {
			b, err = []byte("<dir>"), nil
		}
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

func TestUsageErrors(t *testing.T) {
	_, cfg := fakeAPI(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"positional", []string{"extra"}, "unexpected arguments"},
		{"bad regexp", []string{"-run", "("}, "-run:"},
		{"no match", []string{"-run", "^nothing$"}, "matches no cassette; there are: "},
		{"force without reason", []string{"-force"}, "-force needs -reason"},
		{"bad base url", []string{"-base-url", "ftp:/x"}, "not an absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCmd(t, cfg, append(tt.args, "-dir", t.TempDir())...)
			require.Equal(t, 2, code)
			require.Contains(t, stderr, "refresh-cassettes: ")
			require.Contains(t, stderr, tt.want)
			require.Contains(t, stderr, "usage:")
		})
	}
}

func TestMissingKeyNamesVariable(t *testing.T) {
	_, cfg := fakeAPI(t)
	cfg.apiKey = ""
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "ANTHROPIC_API_KEY is not set")
	require.Empty(t, snapshot(t, dir))
}

func TestDryRun(t *testing.T) {
	_, cfg := fakeAPI(t)
	cfg.apiKey = "" // not needed to list
	dir := t.TempDir()
	stdout, _, code := runCmd(t, cfg, "-dir", dir, "-dry-run", "-run", "npm")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "would record")
	require.Contains(t, stdout, "npm-lodash/happy")
	require.Contains(t, stdout, "(new)")
	require.NotContains(t, stdout, "go-xnet")
	require.Empty(t, snapshot(t, dir))
}

// TestRecordThenReplay is the end-to-end test: the command records every
// scenario path against fakellm into a temp dir, then the fixture tier
// replays from those cassettes (no network) and produces the same
// DiffBytes as a direct run against the fake.
func TestRecordThenReplay(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	ts := targets()
	require.GreaterOrEqual(t, len(ts), 3)
	for i, tg := range ts {
		require.Contains(t, stdout, "] "+tg.key+": recording "+tg.file, "progress line %d", i)
		require.Contains(t, stdout, "  "+tg.key+": new: ")
	}
	require.Contains(t, stdout, "go test ./properties/ -run Golden -update")
	require.NoError(t, cassettes.Verify(dir, cassettes.VerifyOptions{}))

	for _, tg := range ts {
		t.Run(tg.key, func(t *testing.T) {
			c, err := cassettes.Open(filepath.Join(dir, tg.file), cassettes.Options{})
			require.NoError(t, err)
			tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: c.Client()})
			require.NoError(t, err)
			s := tg.scenario
			got, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, tg.prior)
			require.NoError(t, err)
			require.NoError(t, c.Close())
			require.Equal(t, c.ID(), got.RunKey.CassetteID)

			direct, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
			require.NoError(t, err)
			want, err := direct.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, tg.prior)
			require.NoError(t, err)
			require.NotEmpty(t, want.Transform.DiffBytes)
			require.Equal(t, string(want.Transform.DiffBytes), string(got.Transform.DiffBytes))
		})
	}

	// A second refresh against the same deterministic server changes nothing.
	before := snapshot(t, dir)
	stdout, stderr, code = runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, ": unchanged (")
	require.Contains(t, stdout, "no cassette changed")
	require.Equal(t, before, snapshot(t, dir))
}

// replacing replaces old with new in every response body.
type replacing struct {
	next     http.RoundTripper
	old, new string
}

// rewriting changes every response's message id, as a new model snapshot
// would change the answers.
func rewriting(next http.RoundTripper) replacing { return replacing{next, "msg_fake_", "msg_new_"} }

// garbling breaks the model's answer so the pipeline rejects it.
func garbling(next http.RoundTripper) replacing { return replacing{next, "```diff", "```text"} }

func (r replacing) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(r.old), []byte(r.new))
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

func TestPinnedNeedsForceAndReason(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 0, code, stderr)
	before := snapshot(t, dir)

	changed := cfg
	changed.transport = rewriting(cfg.transport)
	_, stderr, code = runCmd(t, changed, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cassette is pinned")
	require.Contains(t, stderr, "-force -reason")
	require.Equal(t, before, snapshot(t, dir), "refused refresh leaves everything as it was")

	stdout, stderr, code := runCmd(t, changed, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy", "-force", "-reason", "new model snapshot")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "npm-lodash/happy: changed: 0 added, 0 removed, 1 changed, 0 same; response text unchanged")
	require.Contains(t, stdout, "go test ./properties/ -run Golden -update")
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m.History, 2)
	require.Equal(t, "new model snapshot", m.History[1].Reason)
	require.Equal(t, "2026-11-22T03:00:00Z", m.History[1].At)
	require.NoError(t, cassettes.Verify(dir, cassettes.VerifyOptions{}))
}

// failAfter lets n requests through, then fails: the API going away (or
// the steward pressing ^C) in the middle of a refresh.
type failAfter struct {
	n    *int
	next http.RoundTripper
}

func (f failAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	if *f.n <= 0 {
		return nil, errors.New("connection reset (simulated)")
	}
	*f.n--
	return f.next.RoundTrip(req)
}

func TestInterruptedRefreshChangesNothing(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	before := snapshot(t, dir)

	n := 2
	broken := cfg
	broken.transport = failAfter{n: &n, next: rewriting(cfg.transport)}
	_, stderr, code = runCmd(t, broken, "-dir", dir, "-base-url", base, "-force", "-reason", "r")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "connection reset (simulated)")
	require.Contains(t, stderr, "nothing was changed in "+dir)
	require.Equal(t, before, snapshot(t, dir), "old cassettes and manifest unchanged, staging removed")
	require.NoError(t, cassettes.Verify(dir, cassettes.VerifyOptions{}))
}

func TestSecretInResponseIsRefused(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	leaky := cfg
	leaky.transport = leak{cfg.transport}
	_, stderr, code := runCmd(t, leaky, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "secret in cassette")
	require.NotContains(t, stderr, dummyKey)
	require.Equal(t, map[string][]byte{}, snapshot(t, dir))
}

// leak echoes the request's key in a response header.
type leak struct{ next http.RoundTripper }

func (l leak) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil {
		// anthropic-sdk-go v2 sends the key as a bearer token.
		resp.Header.Set("X-Echo", strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "))
	}
	return resp, err
}

// TestUnreachableBaseURLNamesItself: the error names the URL dialled, not
// the API URL it stands in for.
func TestUnreachableBaseURLNamesItself(t *testing.T) {
	_, cfg := fakeAPI(t)
	cfg.transport = http.DefaultTransport
	_, stderr, code := runCmd(t, cfg, "-dir", t.TempDir(), "-base-url", "http://127.0.0.1:1/api", "-run", "npm-lodash/happy")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "to http://127.0.0.1:1/api/v1/messages: ")
	require.Contains(t, stderr, "connection refused")
}

func TestExitCode(t *testing.T) {
	var b bytes.Buffer
	require.Equal(t, 0, exitCode(nil, &b))
	require.Equal(t, 1, exitCode(errors.New("boom"), &b))
	require.Equal(t, 2, exitCode(usagef("bad"), &b))
	require.Contains(t, b.String(), "refresh-cassettes: boom")
}

func TestRejectedAnswerIsStillRecorded(t *testing.T) {
	base, cfg := fakeAPI(t)
	cfg.transport = garbling(cfg.transport)
	dir := t.TempDir()
	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "npm-lodash/happy: note: the pipeline rejected the answer")
	require.NoError(t, cassettes.Verify(dir, cassettes.VerifyOptions{}))
}

func TestRecoverFlag(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 0, code, stderr)
	// What a run killed while recording leaves: a staging folder with its
	// marker and part of a cassette (a NewStage of this process would be
	// alive, and left alone).
	stage, err := os.MkdirTemp(dir, ".refresh-")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stage, ".gitignore"), []byte("# a codegenie cassettes staging folder: removed by the next refresh\n*\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "npm-lodash.happy.yaml"), []byte("half a cassette"), 0o644))
	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-recover")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "is consistent")
	require.NoDirExists(t, stage)
}

// TestApplyErrorSaysWhatChanged: a failed Apply that had moved files in
// (an ErrInterruptedApply, which says what changed) is never followed by
// "nothing was changed"; any other failure is.
func TestApplyErrorSaysWhatChanged(t *testing.T) {
	partial := fmt.Errorf("cassettes: d: apply: %w", cassettes.ErrInterruptedApply)
	require.NotContains(t, applyError(partial, "d").Error(), "nothing was changed")
	require.Contains(t, applyError(errors.New("pinned"), "d").Error(), "nothing was changed in d")
}

// TestRecoverSaysWhatItFound: -recover in a directory with nothing left
// to recover but a cassette that no longer matches its manifest fails
// saying so, and never claims the directory is consistent.
func TestRecoverSaysWhatItFound(t *testing.T) {
	base, cfg := fakeAPI(t)
	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base, "-run", "npm-lodash/happy")
	require.Equal(t, 0, code, stderr)
	path := filepath.Join(dir, "npm-lodash.happy.yaml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte("msg_fake_"), []byte("msg_edit_"), 1), 0o644))

	stdout, stderr, code := runCmd(t, cfg, "-dir", dir, "-recover")
	require.Equal(t, 1, code, stdout)
	require.NotContains(t, stdout, "consistent")
	require.Contains(t, stderr, "no refresh of "+dir+" is left unfinished, but the directory does not verify")
	require.Contains(t, stderr, "cassette digest does not match the manifest")
}
