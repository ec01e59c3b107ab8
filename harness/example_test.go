package harness_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/harness"
)

// pipeline is a tiny pipeline: it records two events and returns a diff.
func pipeline(band string) harness.Scenario {
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		rec := run.Recorder()
		if _, err := rec.Emit("job.started", map[string]string{"scenario": "npm"}); err != nil {
			return nil, err
		}
		if _, err := rec.Emit("step.scored", map[string]any{"band": band}); err != nil {
			return nil, err
		}
		return []byte("--- a/package.json\n"), nil
	}
}

// The first green test in a user's module: one call, one function, one
// recorded cassette. The module's README shows this code.
func ExampleCheck() {
	TestSummariseIsDeterministic := func(t *testing.T) {
		harness.Check(t, "summarise", func(ctx context.Context, run *harness.Run) ([]byte, error) {
			client, err := run.Client("testdata/summarise.yaml") // replays, opened for this run alone
			if err != nil {
				return nil, err
			}
			return summarise(ctx, client, run.Recorder()) // your pipeline: output bytes, one event per step
		})
	}
	_ = TestSummariseIsDeterministic
}

// summarise stands for the user's pipeline: it asks through client and
// records one event per step.
func summarise(ctx context.Context, client *http.Client, rec *events.Recorder) ([]byte, error) {
	if _, err := rec.Emit("summary.asked", map[string]string{"model": "m"}); err != nil {
		return nil, err
	}
	return []byte("a summary"), nil
}

func ExampleConfig_Check() {
	_ = func(t *testing.T) {
		cfg := harness.Config{Iterations: 100, Processes: 10}
		cfg.Check(t, "npm", pipeline("accept"))
	}
}

func ExampleConfig_Iterate() {
	rep, err := harness.Config{}.Iterate(context.Background(), "npm", pipeline("accept"))
	fmt.Println(err)
	fmt.Println(rep.Verdict, rep.Runs, len(rep.Classes), rep.Events)
	// Output:
	// <nil>
	// PASS 50 1 2
}

func ExampleConfig_Iterate_nondeterministic() {
	flaky := func(ctx context.Context, run *harness.Run) ([]byte, error) {
		band := "accept"
		if run.Index()%5 == 3 {
			band = "borderline"
		}
		return pipeline(band)(ctx, run)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	rep, _ := harness.Config{ArtifactDir: dir}.Iterate(context.Background(), "npm", flaky)
	fmt.Println(rep.Verdict)
	for i, c := range rep.Classes {
		fmt.Printf("class %d: %d runs, first run %d\n", i+1, c.Runs, c.FirstRun)
	}
	d := rep.Divergence
	fmt.Println("event", d.Event.Index, d.Event.Kind, d.Event.Field, "at byte", d.Event.Offset)
	fmt.Println(d.Event.PayloadDiff[0])
	// Output:
	// NONDETERMINISTIC
	// class 1: 40 runs, first run 0
	// class 2: 10 runs, first run 3
	// event 1 step.scored Payload at byte 9
	// ["band"]: "accept" != "borderline"
}

// Record a cassette once (here against an in-process stand-in for the
// API), then gate a pipeline that replays it in every run.
func ExampleRun_Client() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.yaml")
	api := roundTripper(func(req *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, req.Body) // a real API reads the request
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain"}},
			Body: io.NopCloser(strings.NewReader("hello, world")), Request: req}, nil
	})
	rec, _ := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: api})
	ask := func(ctx context.Context, client *http.Client) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/v1/greet", strings.NewReader(`{"who":"world"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	if _, err := ask(context.Background(), rec.Client()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Close())

	rep, err := harness.Config{}.Iterate(context.Background(), "greet", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(path) // opened for this run, closed after it
		if err != nil {
			return nil, err
		}
		return ask(ctx, client)
	})
	fmt.Println(err, rep.Verdict, rep.Runs)
	// Output:
	// <nil>
	// <nil> PASS 50
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func ExampleRun_Pin() {
	rep, _ := harness.Config{}.Iterate(context.Background(), "pinned", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		run.Pin("model", "claude-sonnet-4-5")
		run.Pin("prompt_template", "v3")
		return []byte("ok"), nil
	})
	fmt.Println(rep.Components["model"], rep.Key == harness.Key(rep.Components))
	// Output: claude-sonnet-4-5 true
}

func ExampleRun_SetEvents() {
	rep, _ := harness.Config{}.Iterate(context.Background(), "own-recorder", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		out, err := pipeline("accept")(ctx, run) // records into run.Recorder()
		evs := run.Recorder().Events()
		run.SetEvents(evs[:1]) // a pipeline with its own recorder hands its tape over
		return out, err
	})
	fmt.Println(rep.Events)
	// Output: 1
}

func ExampleKey() {
	fmt.Println(harness.Key(map[string]string{"model": "m", "cassette_id": "c"})[:16])
	fmt.Println(harness.Key(nil) == "")
	// Output:
	// 0b5a11f92ead86c5
	// true
}

func ExampleDefaultAllowlist() {
	for _, a := range harness.DefaultAllowlist() {
		fmt.Println(a.Field)
	}
	// Output:
	// EmittedAt
	// AuditEventID
}

func ExampleReport_Summary() {
	rep, _ := harness.Config{Iterations: 20, Procs: []int{1}}.Iterate(context.Background(), "npm", pipeline("accept"))
	fmt.Println(strings.Join(strings.Fields(rep.Summary())[:6], " "))
	// Output: harness PASS npm: 20/20 runs (0
}

func ExampleReport_Result() {
	rep, _ := harness.Config{}.Iterate(context.Background(), "npm", pipeline("accept"))
	res := rep.Result()
	fmt.Println(res.Scenario, res.Verdict, res.Runs, res.OK())
	// Output: npm PASS 50 true
}

func ExampleReproCommand() {
	// In a test: the command a failure report gives to reproduce it.
	_ = func(t *testing.T) {
		t.Log(harness.ReproCommand(t)) // cd /home/me/mymodule && go test ./pkg -run '^TestX$' -count=1
	}
}

func ExampleMain() {
	// In main_test.go: print the gate summary after the tests.
	_ = func(m *testing.M) {
		os.Exit(harness.Main(m))
	}
}

func ExampleRun_Recorder() {
	rep, _ := harness.Config{}.Iterate(context.Background(), "steps", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		rec := run.Recorder() // each Emit's parent is the event before it
		for _, step := range []string{"parsed", "planned", "applied"} {
			if _, err := rec.Emit(events.Kind("step."+step), map[string]int{"run": 0}); err != nil {
				return nil, err
			}
		}
		return []byte("done"), nil
	})
	fmt.Println(rep.Verdict, rep.Events)
	// Output: PASS 3
}

func ExampleRun_Index() {
	rep, _ := harness.Config{Iterations: 20}.Iterate(context.Background(), "index", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		return fmt.Appendf(nil, "run %d", run.Index()), nil // a bug: the output depends on the run
	})
	fmt.Println(rep.Verdict, len(rep.Classes))
	// Output: NONDETERMINISTIC 20
}

func ExampleReport_Text() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	rep, _ := harness.Config{ArtifactDir: dir}.Iterate(context.Background(), "npm", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		return nil, errors.New("no API key")
	})
	var sb strings.Builder
	_ = rep.Text(&sb)
	// The report leads with the answer: the verdict, then what differs
	// (here the one error every run gave), then the command to run next
	// when there is one.
	for _, l := range strings.Split(sb.String(), "\n")[:3] {
		fmt.Println(l)
	}
	// Output:
	// BROKEN npm: 50 runs in 1 class (50), every run failed the same way (error (*errors.errorString))
	// class 1, run 0 failed (error (*errors.errorString)):
	//   no API key
}
