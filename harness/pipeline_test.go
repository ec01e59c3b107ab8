package harness

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// toyPipeline is a synthetic pipeline (retrieve, rank, build a prompt,
// ask, transform) with optional, deliberate determinism bugs. It is fast,
// so the harness's sensitivity can be measured over thousands of runs.
type toyPipeline struct {
	// bug is "" (clean), "map", "fanout", "floatsum", "clock", "cache",
	// "random", or one that only a fresh process can see: "env", "pid",
	// "tmpdir", "tz", "numcpu", "hostname".
	bug string
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

// The toy pipeline's event kinds, and the index of each in its tape.
const (
	toyStarted  = events.Kind("job.started")
	toyQueried  = events.Kind("search.queried")
	toyRanked   = events.Kind("search.ranked")
	toyScored   = events.Kind("match.scored")
	toyComposed = events.Kind("text.composed")
	toySent     = events.Kind("request.sent")
	toyReceived = events.Kind("reply.received")
	toyPatched  = events.Kind("patch.produced")

	toyIdxQueried  = 1
	toyIdxRanked   = 2
	toyIdxComposed = 4
	toyIdxSent     = 5
	toyIdxPatched  = 7
)

// toyEnvVar is the variable the "env" bug reads; it is unset in CI.
const toyEnvVar = "CODEGENIE_TOY_REGION"

// emitter records events, each a child of the previous one.
type emitter struct{ rec *events.Recorder }

func (e *emitter) emit(k events.Kind, v any) {
	if _, err := e.rec.Emit(k, v); err != nil {
		panic(err)
	}
}

func (p toyPipeline) run(ctx context.Context, run *Run) ([]byte, error) {
	e := &emitter{rec: run.Recorder()}
	e.emit(toyStarted, map[string]any{"scenario": "toy-npm", "advisory": "GHSA-toy"})
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
	e.emit(toyQueried, query)
	ids, sum := p.rank()
	e.emit(toyRanked, map[string]any{"ids": ids, "score_sum": sum})
	e.emit(toyScored, map[string]any{"band": "accept", "score": 0.83})
	e.emit(toyComposed, map[string]any{"prompt": p.prompt(), "template": "v1"})
	req := map[string]any{"model": "claude-toy", "temperature": 0}
	if p.bug == "clock" {
		req["sent_at"] = time.Now().Format(time.RFC3339Nano)
	}
	e.emit(toySent, req)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.emit(toyReceived, map[string]any{"text": "bump lodash to 4.17.21", "stop_reason": "end_turn"})
	diff := "--- a/package.json\n+++ b/package.json\n@@ -3 +3 @@\n-    \"lodash\": \"4.17.20\"\n+    \"lodash\": \"4.17.21\"\n"
	tr := map[string]any{"files": []string{"package.json"}}
	if note := p.processNote(); note != "" {
		diff = "# " + note + "\n" + diff
	}
	if p.bug == "random" {
		id := fmt.Sprintf("%016x", rand.Uint64())
		diff = "# transform " + id + "\n" + diff
		tr["transform_id"] = id
	}
	tr["diff_digest"] = events.Sum([]byte(diff)).String()
	e.emit(toyPatched, tr)
	return []byte(diff), nil
}

// rank scores the examples in parallel. The clean pipeline keeps results
// by index; "fanout" lists them in completion order and "floatsum" adds
// their float scores in completion order (float addition is not
// associative, so the sum's last bits depend on the order).
func (p toyPipeline) rank() ([]string, float64) {
	type scored struct {
		ID    string
		Score float64
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
	if p.bug == "fanout" || p.bug == "floatsum" {
		ranked = completed
	}
	ids := make([]string, len(ranked))
	sum := 0.0
	for i, r := range ranked {
		if p.bug != "floatsum" {
			ids[i] = r.ID
		} else {
			ids[i] = results[i].ID
		}
		sum += r.Score
	}
	return ids, sum
}

// prompt lists the examples; the "map" bug ranges over a map.
func (p toyPipeline) prompt() string {
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
		return sb.String()
	}
	for _, ex := range toyExamples {
		fmt.Fprintf(&sb, "example %s: %s\n", ex.ID, ex.Text)
	}
	return sb.String()
}

// processNote is what the process-level bugs leak into the output.
func (p toyPipeline) processNote() string {
	switch p.bug {
	case "env":
		return "region " + os.Getenv(toyEnvVar)
	case "pid":
		return fmt.Sprint("worker ", os.Getpid())
	case "tmpdir":
		return "scratch " + os.TempDir()
	case "tz":
		// The local zone's offset at a fixed instant: the bubble's clock
		// differs per run, the zone must not.
		_, off := time.Unix(0, 0).In(time.Local).Zone()
		return fmt.Sprint("utc offset ", off)
	case "numcpu":
		return fmt.Sprint("shards ", runtime.NumCPU())
	case "hostname":
		h, _ := os.Hostname()
		return "host " + h
	}
	return ""
}

// score is a small deterministic CPU-bound similarity, standing in for an
// embedding dot product. Every example gets a different score with many
// significant bits, so adding them in another order changes the last bits
// of the sum.
func score(a, b string) float64 {
	s := 0.0
	words := strings.Fields(b)
	for i := range 200 {
		for _, w := range words {
			bonus := 0.0
			if strings.Contains(a, w) {
				bonus = 1
			}
			s += math.Sqrt(float64(i%7) + 0.1 + bonus + float64(len(a))/10)
		}
	}
	return s * math.Pi
}

func TestToyPipelineCleanIsDeterministic(t *testing.T) {
	t.Parallel()
	rc, err := Config{}.resolve()
	require.NoError(t, err)
	p := toyPipeline{}
	a := runScenario(t.Context(), &rc, 0, 1, false, p.run)
	require.Empty(t, a.errText)
	require.Len(t, a.tape, 8)
	for i := range 20 {
		b := runScenario(t.Context(), &rc, i, 1, false, p.run)
		require.Empty(t, b.errText)
		require.Nil(t, events.Compare(a.tape, b.tape, events.Nondeterministic))
		require.Equal(t, a.output, b.output)
	}
	require.True(t, slices.IsSortedFunc(a.tape, func(x, y events.Event) int { return int(x.Seq) - int(y.Seq) }))
}
