package cassettes

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

// stage records reqs with plain go-vcr into a staging directory inside dir
// and returns the staged path.
func stage(t testing.TB, dir, name string, reqs []plainReq) string {
	t.Helper()
	sdir := ""
	if ss := stages(dir); len(ss) > 0 {
		sdir = ss[0]
	} else {
		var err error
		sdir, err = NewStage(dir)
		require.NoError(t, err)
	}
	return recordPlain(t, sdir, strings.TrimSuffix(name, ".yaml"), echoServer(t), reqs)
}

var reqA = plainReq{method: "POST", path: "/v1/messages", body: `{"model":"m","messages":[{"role":"user","content":"a"}]}`}

func TestBadInput(t *testing.T) {
	srv := echoServer(t)
	good := recordPlain(t, t.TempDir(), "good", srv, []plainReq{reqA})
	goodBytes, err := os.ReadFile(good)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(goodBytes), "\n")
	respAt := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "response:" {
			respAt = i
		}
	}
	require.Positive(t, respAt)

	tests := []struct {
		name     string
		content  *string // nil: no file
		wantErr  error
		wantLine int // -1: any positive line
		wantText string
	}{
		{"missing", nil, ErrCassetteNotFound, 0, "record it with: rerecord-scn"},
		{"empty", ptr(""), errInvalidCassette, 1, "empty file"},
		{"truncated mid-token", ptr(string(goodBytes[:len(goodBytes)/2])), errInvalidCassette, -1, "truncated"},
		{"truncated at a line", ptr(strings.Join(lines[:respAt], "")), errInvalidCassette, 4, "no response code (the file looks truncated)"},
		{"invalid yaml", ptr("---\nversion: 2\ninteractions: [\n  {id: 0,\n"), errInvalidCassette, -1, "not YAML"},
		{"wrong type", ptr("---\nversion: 2\ninteractions:\n  - id: zero\n"), errInvalidCassette, 4, "cannot unmarshal"},
		{"unknown version", ptr(strings.Replace(string(goodBytes), "version: 2", "version: 3", 1)), errUnsupportedVersion, 2, `version "3", want 2`},
		{"version 1", ptr(strings.Replace(string(goodBytes), "version: 2", "version: 1", 1)), errUnsupportedVersion, 2, "go-vcr v3"},
		{"no version", ptr("---\ninteractions: []\n"), errUnsupportedVersion, 2, "no version field"},
		{"not a mapping", ptr("- 1\n- 2\n"), errInvalidCassette, 1, "not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scn.happy.yaml")
			if tt.content != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tt.content), 0o644))
			}
			_, err := Open(path, Config{Hint: "rerecord-scn"})
			require.ErrorIs(t, err, tt.wantErr)
			var ce *CassetteError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Path)
			if tt.wantLine < 0 {
				require.Positive(t, ce.Line)
			} else {
				require.Equal(t, tt.wantLine, ce.Line)
			}
			require.ErrorContains(t, err, tt.wantText)
			require.ErrorContains(t, err, path)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestManifestLifecycle(t *testing.T) {
	dir := t.TempDir()
	// First recording: creates the manifest, new cassettes are pinned.
	require.NoError(t, Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "2026-11-22T00:00:00Z"))
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m.Cassettes, 1)
	require.True(t, m.Cassettes[0].Pinned)
	require.Len(t, m.History, 1)
	require.NoError(t, Verify(dir, VerifyConfig{}))

	// Opening verifies the digest against the manifest next to it.
	c, err := Open(filepath.Join(dir, "s.happy.yaml"), Config{AllowUnused: true})
	require.NoError(t, err)
	require.Equal(t, m.Cassettes[0].Digest, c.ID())
	require.Equal(t, m.Cassettes[0].Digest, c.Transport().(interface{ CassetteID() string }).CassetteID())
	require.NoError(t, c.Close())

	// Re-recording a pinned cassette with a change needs force and a reason.
	reqB := reqA
	reqB.body = strings.Replace(reqA.body, `"a"`, `"b"`, 1)
	staged := stage(t, dir, "s.happy", []plainReq{reqB})
	err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged}}, "")
	require.ErrorIs(t, err, manifest.ErrPinned)
	err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged, Force: true}}, "")
	require.ErrorIs(t, err, manifest.ErrPinned, "force without a reason")
	require.NoError(t, Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged, Force: true, Reason: "prompt v2"}}, ""))
	m2, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m2.History, 2)
	require.Equal(t, "prompt v2", m2.History[1].Reason)
	require.True(t, m2.History[1].Forced)
	require.Equal(t, m.Cassettes[0].Digest, m2.History[1].OldDigest)
	require.NotEqual(t, m2.History[0].Chain, m2.History[1].Chain)
	require.NoError(t, Verify(dir, VerifyConfig{}))
}

func TestVerifyDetects(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, dir string)
		wantErr error
		want    string
	}{
		{"edited cassette", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "s.happy.yaml")
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `\"a\"`, `\"z\"`, 1)), 0o644))
		}, errDigestMismatch, "changed other than by recording it: its digest is"},
		{"stray cassette", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "x.happy.yaml"), []byte("---\nversion: 2\ninteractions: []\n"), 0o644))
		}, errNotInManifest, "delete the stray file"},
		{"deleted cassette", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "s.happy.yaml")))
		}, ErrCassetteNotFound, `'-cassettes.record=s\.happy\.yaml$'`},
		{"history rewritten", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *manifest.Manifest) { m.History[0].Reason = "rewritten" })
		}, manifest.ErrInvalid, "the history was edited"},
		{"history truncated", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *manifest.Manifest) { m.History = m.History[1:] })
		}, manifest.ErrInvalid, "append-only"},
		{"digest edited to match", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *manifest.Manifest) { m.Cassettes[0].Digest = strings.Repeat("0", 64) })
		}, manifest.ErrInvalid, "is not the last one its history records"},
		{"not json", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.Name), []byte("{\n\"format\": 1,\n]"), 0o644))
		}, manifest.ErrInvalid, "manifest.json:3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Apply(dir, []Update{
				{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})},
				{File: "s.retry.yaml", Staged: stage(t, dir, "s.retry", []plainReq{reqA, reqA})},
			}, "")
			require.NoError(t, err)
			require.NoError(t, Verify(dir, VerifyConfig{}))
			tt.mutate(t, dir)
			err = Verify(dir, VerifyConfig{})
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorContains(t, err, tt.want)
			var ce *CassetteError
			require.ErrorAs(t, err, &ce)
		})
	}
}

func TestOpenVerifiesDigest(t *testing.T) {
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	p := filepath.Join(dir, "s.happy.yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "200 OK", "201 Created", 1)), 0o644))
	_, err = Open(p, Config{})
	require.ErrorIs(t, err, errDigestMismatch)
	require.ErrorContains(t, err, "the manifest records")
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "verify", ce.Op)

	// A cassette the manifest does not list.
	other := filepath.Join(dir, "o.happy.yaml")
	require.NoError(t, os.WriteFile(other, b, 0o644))
	_, err = Open(other, Config{})
	require.ErrorIs(t, err, errNotInManifest)
}

func editManifest(t *testing.T, dir string, f func(*manifest.Manifest)) {
	t.Helper()
	p := filepath.Join(dir, manifest.Name)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var m manifest.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	f(&m)
	out, err := m.Encode()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, out, 0o644))
}

func TestApplyKilledMidWrite(t *testing.T) {
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	reqB := reqA
	reqB.body = `{"other":true}`
	staged := stage(t, dir, "s.happy", []plainReq{reqB})
	newStaged := stage(t, dir, "n.happy", []plainReq{reqB})
	before := dirSnapshot(t, dir)
	_, err = apply(dir, []Update{
		{File: "s.happy.yaml", Staged: staged, Force: true, Reason: "r"},
		{File: "n.happy.yaml", Staged: newStaged},
	}, "", failingCreate)
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "write", ce.Op)
	require.Equal(t, before, dirSnapshot(t, dir), "cassettes and manifest unchanged, no temp file left")
	require.NoError(t, Verify(dir, VerifyConfig{}))
}

// TestModelOf: the manifest's model is the first one a response names,
// in a JSON body or in the frames of a stream, whatever else the bodies hold.
func TestModelOf(t *testing.T) {
	sse := map[string][]string{"Content-Type": {"text/event-stream; charset=utf-8"}}
	tests := []struct {
		name    string
		body    string
		headers map[string][]string
		want    string
	}{
		{"json", `{"type":"message","model":"claude-test","content":[{"type":"text","text":"x"}]}`, nil, "claude-test"},
		{"openai", `{"model":"gpt-test","choices":[{"message":{"content":"x"}}]}`, nil, "gpt-test"},
		{"sse", "event: ping\ndata: {\"type\":\"ping\"}\n\n" +
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-s\"}}\n\n", sse, "claude-s"},
		{"not json", `oops`, nil, ""},
		{"no model", `{"type":"error","error":{"type":"overloaded_error"}}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, responseModel(tt.body, tt.headers))
		})
	}
}

// errorPlace is the file and line err names: this package's errors are
// *CassetteError, the manifest reader's own *manifest.Error.
func errorPlace(t *testing.T, err error) (string, int) {
	t.Helper()
	var ce *CassetteError
	if errors.As(err, &ce) {
		return ce.Path, ce.Line
	}
	var me *manifest.Error
	require.ErrorAs(t, err, &me)
	return me.Path, me.Line
}

func TestManifestParsedStrictly(t *testing.T) {
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	mpath := filepath.Join(dir, manifest.Name)
	good, err := os.ReadFile(mpath)
	require.NoError(t, err)
	lines := strings.Count(string(good), "\n")
	tests := []struct {
		name     string
		content  string
		wantLine int
		want     string
	}{
		{"trailing garbage", string(good) + "garbage\n", lines + 1, "trailing data after the JSON document"},
		{"second object", string(good) + "{}", lines + 1, "trailing data"},
		{"duplicate top-level key", strings.Replace(string(good), `"format": 1,`, `"format": 1,`+"\n"+`"format": 1,`, 1), 3, `duplicate key "format"`},
		{"duplicate entry key", strings.Replace(string(good), `"pinned": true`, `"pinned": true,`+"\n"+`"pinned": false`, 1), 9, `duplicate key "pinned"`},
		{"truncated", string(good[:len(good)/2]), strings.Count(string(good[:len(good)/2]), "\n") + 1, "truncated"},
		{"empty", "", 1, "truncated"},
		{"unknown field", strings.Replace(string(good), `"format": 1,`, `"format": 1, "extra": 2,`, 1), 0, `unknown field "extra"`},
		{"wrong type", strings.Replace(string(good), `"interactions": 1,`, `"interactions": "one",`, 1), 7, "cannot unmarshal"},
		{"edited history names its line", strings.Replace(string(good), `"seq": 1,`, `"seq": 2,`, 1), 12, "append-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(mpath, []byte(tt.content), 0o644))
			for _, f := range []struct {
				name string
				call func() error
				own  bool // the error is this package's *CassetteError
			}{
				{"Verify", func() error { return Verify(dir, VerifyConfig{}) }, true},
				{"manifest.Read", func() error { _, err := manifest.Read(mpath); return err }, false},
				{"Open", func() error {
					_, err := Open(filepath.Join(dir, "s.happy.yaml"), Config{AllowUnused: true})
					return err
				}, true},
			} {
				err := f.call()
				require.ErrorIs(t, err, manifest.ErrInvalid, f.name)
				require.ErrorContains(t, err, tt.want, f.name)
				if f.own {
					var ce *CassetteError
					require.ErrorAs(t, err, &ce, f.name)
				}
				path, line := errorPlace(t, err)
				require.Equal(t, mpath, path, f.name)
				if tt.wantLine > 0 {
					require.Equal(t, tt.wantLine, line, "%s: %v", f.name, err)
				}
			}
		})
	}
}

func TestManifestChangeSeenThroughTheCache(t *testing.T) {
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	require.NoError(t, Verify(dir, VerifyConfig{}))
	editManifest(t, dir, func(m *manifest.Manifest) { m.History[0].Reason = "rewritten" })
	require.ErrorIs(t, Verify(dir, VerifyConfig{}), manifest.ErrInvalid)
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.Nil(t, m)
	require.ErrorIs(t, err, manifest.ErrInvalid)
}
