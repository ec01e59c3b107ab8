package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// recordPrompts records one Messages request per prompt into a cassette
// at path, against the in-process fake API.
func recordPrompts(path string, cfg fakellm.Config, prompts ...string) error {
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(cfg).Transport()})
	if err != nil {
		return err
	}
	for _, p := range prompts {
		body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"` + p + `"}]}`
		resp, err := c.Client().Post("https://api.anthropic.com/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return c.Close()
}

// refreshDemo makes a directory with one applied cassette and a staging
// folder holding its re-record, in which the API now fails one request.
func refreshDemo() (dir, stage string, err error) {
	dir, err = os.MkdirTemp("", "review-example-")
	if err != nil {
		return "", "", err
	}
	first, err := cassettes.NewStage(dir)
	if err != nil {
		return "", "", err
	}
	if err := recordPrompts(filepath.Join(first, "demo.yaml"), fakellm.Config{}, "hello", "bye"); err != nil {
		return "", "", err
	}
	if err := cassettes.Apply(dir, []cassettes.Update{{File: "demo.yaml", Staged: filepath.Join(first, "demo.yaml")}}, "first"); err != nil {
		return "", "", err
	}
	if stage, err = cassettes.NewStage(dir); err != nil {
		return "", "", err
	}
	return dir, stage, recordPrompts(filepath.Join(stage, "demo.yaml"), fakellm.Config{Mode: fakellm.HTTPError, Status: 529}, "hello", "bye")
}

// Review a re-record before applying it.
func ExampleCompare() {
	dir, stage, err := refreshDemo()
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	rev, err := review.Compare(context.Background(), dir, stage)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rev.Cassettes {
		for _, in := range c.Interactions {
			fmt.Println(c.File, in.New, in.Drift, in.Why)
		}
	}
	// Output:
	// demo.yaml 0 error [status 200 -> 529 error type (none) -> overloaded_error]
	// demo.yaml 1 error [status 200 -> 529 error type (none) -> overloaded_error]
}

// Name the golden files that pin cassettes, and the command that
// refreshes them.
func ExampleConfig_Compare() {
	dir, stage, err := refreshDemo()
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	digest, _ := cassettes.Digest(filepath.Join(dir, "demo.yaml"))
	goldens := filepath.Join(dir, "goldens")
	os.Mkdir(goldens, 0o755)
	os.WriteFile(filepath.Join(goldens, "demo.json"), []byte(`{"cassette_id":"`+digest+`"}`), 0o644)

	rev, err := review.Config{Goldens: []string{goldens}, GoldenCommand: "go test ./mypkg -run TestGolden -update"}.Compare(context.Background(), dir, stage)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range rev.Goldens {
		fmt.Println(filepath.Base(g.Path), g.Cassettes)
	}
	fmt.Println(rev.GoldenCommand)
	// Output:
	// demo.json [demo.yaml]
	// go test ./mypkg -run TestGolden -update
}

// Review only some of the staged cassettes.
func ExampleConfig_Files() {
	dir, stage, err := refreshDemo()
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	rev, err := review.Config{}.Files(context.Background(), dir, stage, []string{"demo.yaml"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rev.Cassettes), rev.Drifted, rev.Counts[review.Error])
	// Output: 1 true 2
}

// The Markdown form, for a pull-request comment.
func ExampleReview_Markdown() {
	dir, stage, err := refreshDemo()
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	rev, _ := review.Compare(context.Background(), dir, stage)
	var b strings.Builder
	rev.Markdown(&b)
	fmt.Println(strings.SplitN(b.String(), "\n", 2)[0])
	// Output: ### Cassette review: **drifted**
}

// The JSON form, for machines.
func ExampleReview_WriteJSON() {
	dir, stage, err := refreshDemo()
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	rev, _ := review.Compare(context.Background(), dir, stage)
	var b strings.Builder
	rev.WriteJSON(&b)
	var v struct {
		Format string
		Counts map[string]int
	}
	json.Unmarshal([]byte(b.String()), &v)
	fmt.Println(v.Format, v.Counts["error"])
	// Output: codegenie-cassette-review/1 2
}

func ExampleDefaultPrices() {
	p := review.DefaultPrices()
	m, _ := p.Lookup("claude-sonnet-4-5-20250929")
	fmt.Println(p.Currency, m.Model, m.Input, m.Output)
	// Output: USD claude-sonnet-4-5 3000000 15000000
}

// A dated model is priced by the entry it extends.
func ExamplePrices_Lookup() {
	m, ok := review.DefaultPrices().Lookup("gpt-4o-mini-2024-07-18")
	fmt.Println(m.Model, ok)
	// Output: gpt-4o-mini true
}

func ExampleModelPrice_Cost() {
	m, _ := review.DefaultPrices().Lookup("claude-sonnet-4-5")
	fmt.Println(m.Cost(review.Usage{Input: 1000, Output: 500}), "micro-USD")
	// Output: 10500 micro-USD
}

// Override the built-in prices with a file.
func ExampleReadPrices() {
	dir, _ := os.MkdirTemp("", "prices-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "prices.json")
	os.WriteFile(path, []byte(`{"format":1,"currency":"USD","unit":"per million tokens","models":[{"model":"local-llama","input":0,"output":0.01}]}`), 0o644)
	p, err := review.ReadPrices(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = review.Config{Prices: p}
	fmt.Println(p.Models[0].Model, p.Models[0].Output)
	// Output: local-llama 10000
}
