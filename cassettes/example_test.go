package cassettes_test

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

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// Replay a committed cassette through the fixture pipeline: no network,
// and the run is pinned to the cassette's digest.
func ExampleOpen() {
	s, _ := fixtures.Lookup("npm-lodash")
	c, err := cassettes.Open(filepath.Join("testdata", s.Name+".happy.yaml"),
		cassettes.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: c.Client()})
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.RunKey.CassetteID == c.ID())
	fmt.Println(strings.SplitN(string(res.Transform.DiffBytes), "\n", 2)[0])
	fmt.Println(c.Close()) // every recorded interaction was used
	// Output:
	// true
	// diff --git a/package.json b/package.json
	// <nil>
}

// Record one request (here against the in-process fake API) and save it.
func ExampleOpen_record() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.happy.yaml")
	c, _ := cassettes.Open(path, cassettes.Config{
		Mode:          cassettes.Record,
		RealTransport: fakellm.New(fakellm.Config{}).Transport(),
		APIKey:        "sk-ant-example-key-not-real",
	})
	req, _ := http.NewRequest("POST", "https://api.example.com/v1/embeddings", strings.NewReader(`{"model":"m","input":"hello"}`))
	req.Header.Set("Authorization", "Bearer sk-ant-example-key-not-real")
	resp, err := c.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(c.Close())
	saved, _ := os.ReadFile(path)
	fmt.Println(bytes.Contains(saved, []byte("sk-ant-example")), c.ID() != "")
	// Output:
	// <nil>
	// false true
}

// Verify the committed cassettes against their manifest, and see a
// hand-edited copy rejected.
func ExampleVerify() {
	fmt.Println(cassettes.Verify("testdata", cassettes.VerifyConfig{}))

	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	for _, f := range []string{"manifest.json", "npm-lodash.happy.yaml"} {
		b, _ := os.ReadFile(filepath.Join("testdata", f))
		if f != "manifest.json" {
			b = bytes.Replace(b, []byte("200 OK"), []byte("200 Fine"), 1)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	err := cassettes.Verify(dir, cassettes.VerifyConfig{})
	fmt.Println(errors.Is(err, cassettes.ErrDigestMismatch))
	// Output:
	// <nil>
	// true
}

// The cassette_id of a file is the one its replay pins runs to.
func ExampleDigest() {
	path := filepath.Join("testdata", "npm-lodash.happy.yaml")
	id, _ := cassettes.Digest(path)
	c, err := cassettes.Open(path, cassettes.Config{AllowUnused: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(id == c.ID(), len(id))
	// Output: true 64
}

// Move a freshly recorded cassette into a directory and record it in the
// manifest, which Verify then checks it against.
func ExampleApply() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	stage, _ := cassettes.NewStage(dir) // recording would write here
	staged := filepath.Join(stage, "npm-lodash.happy.yaml")
	b, _ := os.ReadFile(filepath.Join("testdata", "npm-lodash.happy.yaml"))
	os.WriteFile(staged, b, 0o644)

	err := cassettes.Apply(dir, []cassettes.Update{{File: "npm-lodash.happy.yaml", Staged: staged}}, "2026-11-22T00:00:00Z")
	fmt.Println(err)
	_, err = os.Stat(filepath.Join(dir, "npm-lodash.happy.yaml"))
	fmt.Println(err)
	fmt.Println(cassettes.Verify(dir, cassettes.VerifyConfig{}))
	// Output:
	// <nil>
	// <nil>
	// <nil>
}

// Code that only holds the *http.Client discovers the cassette through
// its transport, as the pipeline does for the run's cassette_id.
func ExampleCassette_Transport() {
	c, err := cassettes.Open(filepath.Join("testdata", "go-xnet.happy.yaml"), cassettes.Config{AllowUnused: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	client := c.Client()
	id := client.Transport.(interface{ CassetteID() string }).CassetteID()
	fmt.Println(id == c.ID(), c.Interactions(), c.Transport() == client.Transport)
	// Output: true 1 true
}

// A test records its cassette with go test -cassettes.record=NAME (or
// -cassettes.record-missing) and replays it under plain go test. Here the
// cassette is recorded through Redirect against an in-process fake, so the
// cassette names the real API's URL.
func ExampleOpenT() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.yaml")
	fake := fakellm.New(fakellm.Config{})
	toFake, _ := cassettes.Redirect("https://api.openai.com", "http://fake.invalid", fake.Transport())
	rec, _ := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: toFake})
	post := func(c *http.Client) string {
		resp, err := c.Post("https://api.openai.com/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	recorded := post(rec.Client())
	fmt.Println(rec.Close())

	c, _ := cassettes.Open(path, cassettes.Config{}) // what OpenT(t, path, cfg) does, without t
	fmt.Println(post(c.Client()) == recorded, c.Close())
	// Output:
	// <nil>
	// true <nil>
}

// Record against a local fake while the cassette keeps the API's URL.
func ExampleRedirect() {
	rt, err := cassettes.Redirect("https://api.anthropic.com", "http://127.0.0.1:8080", nil)
	fmt.Println(rt != nil, err)
	// Output: true <nil>
}

// Recover completes or discards what killed refreshes left; a staging
// folder whose refresh is still running (here, this process's) is left
// alone.
func ExampleRecover() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	stage, _ := cassettes.NewStage(dir) // a refresh still recording
	fmt.Println(cassettes.Recover(dir))
	_, err := os.Stat(stage)
	fmt.Println(err == nil)
	// Output:
	// <nil>
	// true
}

// A miss is data: the request, the nearest recorded interaction and how
// the request differs from it, field by field.
func ExampleMissError() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "summarise.yaml")
	ask := func(c *http.Client, prompt string) error {
		resp, err := c.Post("https://api.openai.com/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"system","content":"`+prompt+`"},{"role":"user","content":"lodash"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	rec, _ := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{}).Transport()})
	_ = ask(rec.Client(), "Summarise the advisory. Be concise.")
	_ = rec.Close()

	c, _ := cassettes.Open(path, cassettes.Config{AllowUnused: true})
	err := ask(c.Client(), "Summarise the advisory. Be brief.")
	var miss *cassettes.MissError
	if errors.As(err, &miss) {
		fmt.Println(miss.Method, miss.URL, "nearest:", miss.Nearest)
		for _, d := range miss.Diff {
			fmt.Printf("%s: %s != %s\n", d.Field, d.Recorded, d.Requested)
		}
	}
	fmt.Println(errors.Is(err, cassettes.ErrInteractionNotFound))
	// Output:
	// POST https://api.openai.com/v1/chat/completions nearest: 0
	// body ["messages"][0]["content"]: "…concise." != "…brief."
	// true
}
