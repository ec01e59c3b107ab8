package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/prompt"
)

func ExampleTier_Run() {
	s, _ := fixtures.Lookup("pypi-requests")
	tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("path:", res.Path)
	for _, e := range res.Events {
		fmt.Println(e.Seq, e.Kind)
	}
	fmt.Print(string(res.Transform.DiffBytes))
	// Output:
	// path: happy
	// 1 run.started
	// 2 retrieval.queried
	// 3 retrieval.ranked
	// 4 band.classified
	// 5 prompt.built
	// 6 llm.requested
	// 7 llm.responded
	// 8 transform.produced
	// diff --git a/requirements.txt b/requirements.txt
	// --- a/requirements.txt
	// +++ b/requirements.txt
	// @@ -1,6 +1,6 @@
	//  # Runtime dependencies of the billing worker. Pinned; refresh with pip-compile.
	//  boto3==1.34.11
	//  celery==5.3.6
	// -requests==2.31.0
	// +requests==2.32.0
	//  urllib3==2.0.7
	//  python-dateutil==2.8.2
}

// With prior attempts the run takes the retry-bypass path.
func ExampleTier_Run_retry() {
	s, _ := fixtures.Lookup("go-xnet")
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, s.Prior)
	fmt.Println(res.Path, err)
	// Output:
	// retry <nil>
}

// An unusable answer is an error with a failure event, never a panic.
func ExampleTier_Run_unusable() {
	s, _ := fixtures.Lookup("npm-lodash")
	s.Advisory.ID += " FAKELLM-GARBAGE" // makes the fake model answer garbage
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	var uerr *fallback.UnusableCompletionError
	fmt.Println(errors.Is(err, fallback.ErrUnusableCompletion), errors.As(err, &uerr) && uerr.Reason == fallback.ReasonMalformed)
	fmt.Println(res.Events[len(res.Events)-1].Kind)
	// Output:
	// true true
	// transform.failed
}

func ExampleTier_RunKey() {
	s, _ := fixtures.Lookup("go-xnet")
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	key, err := tier.RunKey(s.Repo)
	if err != nil {
		fmt.Println(err)
		return
	}
	sha, _ := s.Repo.SnapshotSHA()
	fmt.Println(key.RepoSnapshotSHA == sha, key.CassetteID == "", len(key.String()))
	// Output:
	// true true 64
}

func ExampleTier_Pin() {
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	pin, _ := tier.Pin()
	fmt.Println(pin.TemplateVersion == prompt.TemplateVersion, pin.TransformVersion, pin.K, pin.ThresholdLow, pin.ThresholdHigh, pin.Model)
	// Output:
	// true codegenie-transform/v1 4 0.45 0.55 claude-sonnet-4-5
}

func ExampleRunKey() {
	a := fallback.RunKey{StoreDigest: "s", RepoSnapshotSHA: "r", EmbeddingModelDigest: "e", ConfigDigest: "c"}
	var b fallback.RunKey
	b.ConfigDigest, b.EmbeddingModelDigest, b.RepoSnapshotSHA, b.StoreDigest = "c", "e", "r", "s"
	fmt.Println(a.String() == b.String())
	b.CassetteID = "cassette"
	fmt.Println(a.Digest() == b.Digest())
	// Output:
	// true
	// false
}

func ExampleRepoContext_SnapshotSHA() {
	repo := fallback.RepoContext{Files: []prompt.File{
		{Path: "a/b", Content: []byte("nested\n")},
		{Path: "a.b", Content: []byte("sibling\n")},
	}}
	sha, err := repo.SnapshotSHA()
	fmt.Println(sha, err)
	// Output:
	// 78099329434752aa36272b0f9adc3da494ce8f0a <nil>
}

func ExampleCanonicalize() {
	repo := fallback.RepoContext{Files: []prompt.File{
		{Path: "requirements.txt", Content: []byte("flask==3.0.0\njinja2==3.1.2\nrequests==2.31.0\n")},
	}}
	// A sloppy diff: bare names, no context.
	model := "--- requirements.txt\n+++ requirements.txt\n@@ -2 +2 @@\n-jinja2==3.1.2\n+jinja2==3.1.3\n"
	t, err := fallback.Canonicalize(repo, []byte(model))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(t.DiffBytes))
	// Output:
	// diff --git a/requirements.txt b/requirements.txt
	// --- a/requirements.txt
	// +++ b/requirements.txt
	// @@ -1,3 +1,3 @@
	//  flask==3.0.0
	// -jinja2==3.1.2
	// +jinja2==3.1.3
	//  requests==2.31.0
}

func ExampleTransform_Apply() {
	repo := fallback.RepoContext{Files: []prompt.File{{Path: "go.mod", Content: []byte("module x\n\nrequire golang.org/x/net v0.17.0\n")}}}
	t, _ := fallback.Canonicalize(repo, []byte("--- a/go.mod\n+++ b/go.mod\n@@ -3 +3 @@\n-require golang.org/x/net v0.17.0\n+require golang.org/x/net v0.23.0\n"))
	after, err := t.Apply(repo)
	fmt.Print(string(after.Files[0].Content), err, "\n")
	// Output:
	// module x
	//
	// require golang.org/x/net v0.23.0
	// <nil>
}

func ExampleUnusableCompletionError() {
	repo := fallback.RepoContext{Files: []prompt.File{{Path: "package.json", Content: []byte("{}\n")}}}
	_, err := fallback.Canonicalize(repo, []byte("--- a/yarn.lock\n+++ b/yarn.lock\n@@ -1 +1 @@\n-a\n+b\n"))
	var uerr *fallback.UnusableCompletionError
	if errors.As(err, &uerr) {
		fmt.Println(uerr.Reason, uerr.Path)
	}
	// Output:
	// unknown-file yarn.lock
}

func ExamplePromptDigest() {
	a := fallback.PromptDigest(prompt.Prompt{System: "system", User: "user"})
	b := fallback.PromptDigest(prompt.Prompt{System: "system", User: "user!"})
	fmt.Println(a == b, len(a.String()))
	// Output:
	// false 64
}

// replayTransport stands for a cassette transport: it names its cassette.
type replayTransport struct{ http.RoundTripper }

func (replayTransport) CassetteID() string { return "cassette-0123" }

func ExampleCassetteIdentifier() {
	client := &http.Client{Transport: replayTransport{fixtures.FakeHTTPClient().Transport}}
	tier, _ := fixtures.NewTier(fixtures.TierConfig{HTTPClient: client})
	s, _ := fixtures.Lookup("npm-lodash")
	key, _ := tier.RunKey(s.Repo)
	fmt.Println(key.CassetteID)
	// Output:
	// cassette-0123
}
