package fuzz_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/manifest"
)

// smallCassette is a minimal valid cassette: the seed, small so that a
// plain -fuzztime run spends its time executing, not minimising.
const smallCassette = `---
version: 2
interactions:
    - id: 0
      request:
        body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}'
        headers:
            Content-Type:
                - application/json
            Anthropic-Version:
                - "2023-06-01"
        url: https://api.anthropic.com/v1/messages
        method: POST
      response:
        body: "event: a\ndata: {}\n\n"
        headers:
            Content-Type:
                - text/event-stream
        status: 200 OK
        code: 200
`

// FuzzLoad: any bytes either open as a cassette whose digest Digest
// reports the same, or fail with a *cassettes.CassetteError naming the
// file; never a panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(smallCassette))
	f.Add([]byte(smallCassette[:len(smallCassette)/2]))
	f.Add([]byte("---\nversion: 2\ninteractions: []\n"))
	path := filepath.Join(f.TempDir(), "f.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := cassettes.Open(path, cassettes.Config{AllowUnused: true})
		if err != nil {
			var ce *cassettes.CassetteError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Fatalf("error %v is not a *CassetteError naming the file", err)
			}
			return
		}
		d, err := cassettes.Digest(path)
		if err != nil || d != c.ID() {
			t.Fatalf("Digest: %v, %s; Open said %s", err, d, c.ID())
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzManifest: any bytes either read as a manifest that Verify accepts
// with its cassettes absent only as missing files, or fail with
// manifest.ErrInvalid; never a panic.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"cassettes":[],"history":[]}`))
	f.Add([]byte(`{"format":1,"cassettes":[],"history":[]} junk`))
	f.Add([]byte(`{"format":1,"format":1,"cassettes":[],"history":[]}`))
	f.Add([]byte(`{"format":1,"cassettes":[{"file":"a.yaml","digest":"cce3d4ef3cfcbbcd8b0c842211ddfc05f65ac93c3951d64b5c20684857d4f9a3","interactions":1,"pinned":true}],"history":[]}`))
	dir := f.TempDir()
	path := filepath.Join(dir, manifest.Name)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := manifest.Read(path)
		if err != nil {
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("error %v is not manifest.ErrInvalid", err)
			}
			return
		}
		verr := cassettes.Verify(dir, cassettes.VerifyConfig{})
		if len(m.Cassettes) == 0 && verr != nil {
			t.Fatalf("an empty valid manifest fails Verify: %v", verr)
		}
	})
}
