package cassettes_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// agedDir records one cassette at recorded into a new directory whose
// manifest gives cassettes a maximum age of 30 days and a hard one of 60.
func agedDir(recorded time.Time) (string, error) {
	dir, err := os.MkdirTemp("", "cassettes-fresh-")
	if err != nil {
		return "", err
	}
	stage, err := cassettes.NewStage(dir)
	if err != nil {
		return dir, err
	}
	staged := filepath.Join(stage, "demo.yaml")
	c, err := cassettes.Open(staged, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{}).Transport()})
	if err != nil {
		return dir, err
	}
	resp, err := c.Client().Post("https://api.example.com/v1/embeddings", "application/json", strings.NewReader(`{"model":"m","input":"hi"}`))
	if err != nil {
		return dir, err
	}
	resp.Body.Close()
	if err := c.Close(); err != nil {
		return dir, err
	}
	if err := cassettes.Apply(dir, []cassettes.Update{{File: "demo.yaml", Staged: staged, RecordedAt: recorded}}, ""); err != nil {
		return dir, err
	}
	// The limits are policy, set by hand in manifest.json.
	path := filepath.Join(dir, "manifest.json")
	var m map[string]any
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &m)
	m["max_age"], m["hard_max_age"] = "30d", "60d"
	b, _ = json.Marshal(m)
	return dir, os.WriteFile(path, b, 0o644)
}

// Verify a directory at a given instant: past the maximum age is a
// warning, past the hard one an error.
func ExampleVerify_freshness() {
	recorded := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir, err := agedDir(recorded)
	defer os.RemoveAll(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	refresh := func(string) string { return "refresh-cassettes -expired" }
	for _, days := range []int{10, 45, 90} {
		var warn strings.Builder
		err := cassettes.Verify(dir, cassettes.VerifyConfig{
			Now:     func() time.Time { return recorded.Add(time.Duration(days) * 24 * time.Hour) },
			Warn:    &warn,
			Refresh: refresh,
		})
		fmt.Printf("day %d: warned %v, expired %v\n", days, warn.Len() > 0, err != nil)
	}
	// Output:
	// day 10: warned false, expired false
	// day 45: warned true, expired false
	// day 90: warned false, expired true
}
