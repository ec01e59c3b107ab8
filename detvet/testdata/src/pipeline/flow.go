package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"expvar"
	"fmt"
	"log"
	"log/slog"
	"maps"
	mrand "math/rand"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"example.com/sdk"
)

// ---- values that reach an output: true positives ----

type event struct {
	At      time.Time
	Payload string
}

type recorder struct{ events []event }

func (r *recorder) emit(e event) { r.events = append(r.events, e) }

func stampEvent(r *recorder, payload string) {
	r.emit(event{At: time.Now(), Payload: payload}) // want `time\.Now reads the wall clock`
}

func requestHeader(ctx context.Context, c *http.Client, body string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", "https://llm.example.com/v1", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Request-Id", traceID()) // the finding is inside traceID, whose result reaches this header
	_, err = c.Do(req)
	return err
}

// traceID returns a random id; its callers decide whether it matters.
func traceID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // want `crypto/rand\.Read reads operating-system entropy`
	return hex.EncodeToString(b)
}

var started = time.Now() // want `time\.Now reads the wall clock`

func writeFile(name string) error {
	return os.WriteFile(name, []byte(os.Getenv("USER")), 0o644) // want `os\.Getenv reads the environment`
}

func toWriter(w *bytes.Buffer) {
	fmt.Fprintf(w, "built at %v\n", time.Now()) // want `time\.Now reads the wall clock`
}

func throughLocalBuilder() string {
	var b strings.Builder
	b.WriteString(time.Now().Format(time.RFC3339)) // want `time\.Now reads the wall clock`
	return b.String()
}

func elapsedHelper(start time.Time) time.Duration { return time.Since(start) } // want `time\.Since reads the wall clock`

func usesHelper(start time.Time) string {
	return elapsedHelper(start).String()
}

// ---- values that reach only a logger or nothing: true negatives ----

func timedForDebug(ctx context.Context, docs []string) []string {
	start := time.Now() // tn: only measured for a debug line
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		out = append(out, strings.ToUpper(d))
	}
	slog.DebugContext(ctx, "ranked", "took", time.Since(start)) // tn
	return out
}

func traceOnlyLogged(logger *slog.Logger, prompt string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // tn: the trace id reaches only the logger
	logger.Info("calling model", "trace", hex.EncodeToString(b))
	return strings.TrimSpace(prompt)
}

func stderrOnly(x int) int {
	fmt.Fprintf(os.Stderr, "at %v\n", time.Now()) // tn: standard error is a log
	log.Printf("took %v", time.Since(started))    // tn
	return x * 2
}

func deferredTiming(xs []int) (n int) {
	start := time.Now() // tn: logged by the deferred function only
	defer func() { slog.Debug("sum", "took", time.Since(start)) }()
	for _, x := range xs {
		n += x
	}
	return n
}

// elapsedForLog is unexported and its one caller only logs the result.
func elapsedForLog(start time.Time) time.Duration { return time.Since(start) } // tn

func logsHelper(start time.Time, x int) int {
	slog.Info("done", "took", elapsedForLog(start))
	return x + 1
}

func sdkParams(ctx context.Context, c *sdk.Client, prompt string) (*sdk.Message, error) {
	p := sdk.MessageParams{Model: "m", Prompt: prompt}
	p.Metadata.UserID = "run-" + time.Now().Format(time.RFC3339) // want `time\.Now reads the wall clock`
	return c.New(ctx, p)
}

func requestBody(ctx context.Context, prompt string) (*http.Response, error) {
	body := fmt.Sprintf(`{"prompt":%q,"seed":%d}`, prompt, mrand.Int63()) // want `math/rand\.Int63 draws from the global random source`
	req, err := http.NewRequestWithContext(ctx, "POST", "https://llm.example.com/v1", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

func goAppendLogged(xs []int) int {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out []int
	)
	for _, x := range xs {
		wg.Go(func() {
			mu.Lock()
			out = append(out, x) // tn: the order is only logged
			mu.Unlock()
		})
	}
	wg.Wait()
	slog.Debug("done", "order", out)
	return len(xs)
}

func collectLogged(m map[string]int) int {
	keys := slices.Collect(maps.Keys(m)) // tn: only logged
	slog.Debug("keys", "keys", keys)
	return len(m)
}

func writeThroughBuffer(name string) {
	f, err := os.Create(name)
	if err != nil {
		return
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "seed %d\n", mrand.Int()) // want `math/rand\.Int draws from the global random source`
	_ = w.Flush()
}

func writeFileDirect(name string) {
	f, err := os.Create(name)
	if err != nil {
		return
	}
	_, _ = f.WriteString(os.Getenv("HOME")) // want `os\.Getenv reads the environment`
	_ = f.Close()
}

var calls = expvar.NewInt("calls")

func countedCall(ctx context.Context, deadline time.Time, call func(context.Context) string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Until(deadline)) // tn: a deadline for the call, not part of its output
	defer cancel()
	start := time.Now() // tn: reaches only a counter
	out := call(ctx)
	calls.Add(int64(time.Since(start))) // tn
	return out
}
