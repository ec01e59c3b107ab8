package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// toyPipeline is a synthetic stand-in for the fallback tier with the same
// event shape (job.started … result.produced) and optional, deliberate
// determinism bugs. It is fast, so the harness's sensitivity can be
// measured over thousands of runs.
type toyPipeline struct {
	bug string // "" (clean), "map", "fanout", "clock", "cache", "random"
}

// toyCache is package-level state that survives across runs: the "cache"
// bug mutates it. resetToyCache simulates a fresh process.
var (
	toyCacheMu sync.Mutex
	toyCache   map[string]bool
)

func resetToyCache() {
	toyCacheMu.Lock()
	toyCache = nil
	toyCacheMu.Unlock()
}

var toyExamples = []struct {
	ID   string
	Text string
}{
	{"ex-01", "lodash prototype pollution bump to 4.17.21"},
	{"ex-02", "minimist prototype pollution bump to 1.2.6"},
	{"ex-03", "golang.org/x/net http2 rapid reset bump to 0.17.0"},
	{"ex-04", "requests proxy auth leak pin to 2.31.0"},
	{"ex-05", "axios ssrf bump to 1.6.0"},
	{"ex-06", "jinja2 sandbox escape pin to 3.1.3"},
}

// Indexes of the events the toy pipeline emits.
const (
	toyIdxQueried   = 1
	toyIdxRanked    = 2
	toyIdxBand      = 3
	toyIdxPrompt    = 4
	toyIdxRequested = 5
	toyIdxResponded = 6
	toyIdxTransform = 7
)

func (p toyPipeline) run(ctx context.Context, _ int) (Outcome, error) {
	rec := events.NewRecorder(events.Options{})
	emit := func(parent uint64, k events.Kind, v any) uint64 {
		seq, err := rec.EmitAfter(parent, k, v)
		if err != nil {
			panic(err)
		}
		return seq
	}
	root := emit(0, kindStarted, map[string]any{"scenario": "toy-npm", "advisory": "GHSA-toy"})

	query := map[string]any{"text": "lodash prototype pollution", "k": 4}
	if p.bug == "cache" {
		toyCacheMu.Lock()
		query["cached"] = toyCache["lodash"]
		if toyCache == nil {
			toyCache = map[string]bool{}
		}
		toyCache["lodash"] = true
		toyCacheMu.Unlock()
	}
	q := emit(root, kindQueried, query)

	// Scoring fans out over goroutines; the clean pipeline records each
	// result by index, the "fanout" bug appends in completion order.
	type scored struct {
		ID    string
		Score int
	}
	results := make([]scored, len(toyExamples))
	var completed []scored
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, ex := range toyExamples {
		wg.Go(func() {
			s := score(ex.Text, "lodash prototype pollution")
			results[i] = scored{ex.ID, s}
			mu.Lock()
			completed = append(completed, scored{ex.ID, s})
			mu.Unlock()
		})
	}
	wg.Wait()
	ranked := results
	if p.bug == "fanout" {
		ranked = completed
	}
	ids := make([]string, len(ranked))
	for i, r := range ranked {
		ids[i] = r.ID
	}
	rk := emit(q, kindRanked, map[string]any{"ids": ids})
	band := emit(rk, kindClassified, map[string]any{"band": "accept", "score": 0.83})

	// The prompt lists the examples; the "map" bug ranges over a map.
	var sb strings.Builder
	sb.WriteString("Fix GHSA-toy in package.json.\n")
	if p.bug == "map" {
		m := map[string]string{}
		for _, ex := range toyExamples {
			m[ex.ID] = ex.Text
		}
		for id, text := range m {
			fmt.Fprintf(&sb, "example %s: %s\n", id, text)
		}
	} else {
		for _, ex := range toyExamples {
			fmt.Fprintf(&sb, "example %s: %s\n", ex.ID, ex.Text)
		}
	}
	pr := emit(band, kindBuilt, map[string]any{"prompt": sb.String(), "template": "v1"})

	req := map[string]any{"model": "claude-toy", "temperature": 0}
	if p.bug == "clock" {
		req["sent_at"] = time.Now().Format(time.RFC3339Nano)
	}
	rq := emit(pr, kindRequested, req)
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	rs := emit(rq, kindResponded, map[string]any{"text": "bump lodash to 4.17.21", "stop_reason": "end_turn"})

	diff := "--- a/package.json\n+++ b/package.json\n@@ -3 +3 @@\n-    \"lodash\": \"4.17.20\"\n+    \"lodash\": \"4.17.21\"\n"
	tr := map[string]any{"files": []string{"package.json"}}
	if p.bug == "random" {
		id := fmt.Sprintf("%016x", rand.Uint64())
		diff = "# transform " + id + "\n" + diff
		tr["transform_id"] = id
	}
	tr["diff_digest"] = events.Sum([]byte(diff)).String()
	emit(rs, kindProduced, tr)
	return Outcome{DiffBytes: []byte(diff), Events: rec.Events()}, nil
}

// score is a small deterministic CPU-bound similarity, standing in for an
// embedding dot product.
func score(a, b string) int {
	s := 0
	for i := range 200 {
		for _, w := range strings.Fields(b) {
			if strings.Contains(a, w) {
				s += i % 3
			}
		}
	}
	return s
}

func TestToyPipelineCleanIsDeterministic(t *testing.T) {
	p := toyPipeline{}
	a, err := p.run(t.Context(), 0)
	require.NoError(t, err)
	require.Len(t, a.Events, 8)
	for i := range 20 {
		b, err := p.run(t.Context(), i)
		require.NoError(t, err)
		require.Nil(t, events.Compare(a.Events, b.Events, events.Nondeterministic))
		require.Equal(t, a.DiffBytes, b.DiffBytes)
	}
	require.True(t, slices.IsSortedFunc(a.Events, func(x, y events.Event) int { return int(x.Seq) - int(y.Seq) }))
}
