package bundle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
)

// tape records a small run whose completion is the given text.
func tape(completion string) []events.Event {
	r := events.NewRecorder(events.Config{})
	_, _ = r.Emit("start", map[string]string{"advisory": "GHSA-1"})
	_, _ = r.Emit("classify", map[string]string{"band": "accept"})
	_, _ = r.Emit("prompt", map[string]string{"user": "bump lodash"})
	_, _ = r.Emit("complete", map[string]string{"text": completion})
	_, _ = r.Emit("produce", map[string]string{"diff": completion})
	return r.Events()
}

func meta() bundle.Metadata {
	return bundle.Metadata{Scenario: "lodash", ToolVersion: "v0.1.0", GoVersion: "go1.26.8"}
}

// run is one run of the lodash scenario.
func run(id, completion string) bundle.Run {
	return bundle.Run{ID: id, Pin: map[string]string{"model": "m-1"}, Output: []byte(completion), Events: tape(completion)}
}

func tempDir() string {
	d, err := os.MkdirTemp("", "bundle-example-")
	if err != nil {
		panic(err)
	}
	return d
}

// counter is a fold (bundle.Folder) that counts events by kind.
type counter struct {
	At    uint64         `json:"at"`
	Kinds map[string]int `json:"kinds"`
}

func (c *counter) FoldName() string { return "example/counter/1" }

func (c *counter) Apply(e events.Event) error {
	if c.Kinds == nil {
		c.Kinds = map[string]int{}
	}
	c.At = e.Seq
	c.Kinds[string(e.Kind)]++
	return nil
}

func ExampleConfig_Write() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	b := &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "+lodash 4.17.21"), run("run-001", "+lodash 4.17.21")}}
	if err := cfg.Write(context.Background(), filepath.Join(dir, "run.bundle"), b); err != nil {
		fmt.Println(err)
		return
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "run.bundle"))
	for _, e := range ents {
		fmt.Println(e.Name())
	}
	// Output:
	// blobs
	// events.log
	// manifest.json
	// metadata.json
	// runs.json
}

func ExampleConfig_WriteFile() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	b := &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "+lodash 4.17.21")}}
	p1, p2 := filepath.Join(dir, "a.bundle.zst"), filepath.Join(dir, "b.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p1, b)
	_ = cfg.WriteFile(context.Background(), p2, b)
	x, _ := os.ReadFile(p1)
	y, _ := os.ReadFile(p2)
	fmt.Println("same bytes:", string(x) == string(y))
	// Output: same bytes: true
}

func ExampleConfig_WriteFile_force() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "evidence.bundle.zst")
	b := &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}}
	fmt.Println(cfg.WriteFile(context.Background(), p, b))
	// A second write refuses to replace the bundle, unless forced.
	fmt.Println(errors.Is(cfg.WriteFile(context.Background(), p, b), bundle.ErrExists))
	fmt.Println(bundle.Config{Force: true}.WriteFile(context.Background(), p, b))
	// Nothing that is not a bundle is ever replaced.
	notes := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(notes, []byte("mine"), 0o644)
	fmt.Println(errors.Is(bundle.Config{Force: true}.WriteFile(context.Background(), notes, b), bundle.ErrExists))
	// Output:
	// <nil>
	// true
	// <nil>
	// true
}

func ExampleConfig_Write_force() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle")
	cfg := bundle.Config{Force: true} // replaces a bundle, never anything else
	_ = cfg.Write(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}})
	_ = cfg.Write(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "y")}})
	b, _ := cfg.Load(context.Background(), p)
	fmt.Printf("%s\n", b.Runs[0].Output)
	// Output: y
}

func ExampleConfig_Verify() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "+lodash 4.17.21")}})
	rep, err := cfg.Verify(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Form, len(rep.Runs), "run,", rep.Events, "events")

	// A truncated copy is rejected with the file that is cut short.
	raw, _ := os.ReadFile(p)
	_ = os.WriteFile(p, raw[:len(raw)-8], 0o644)
	_, err = cfg.Verify(context.Background(), p)
	var be *bundle.BundleError
	fmt.Println(errors.Is(err, bundle.ErrTruncated), errors.As(err, &be))
	// Output:
	// file 1 run, 5 events
	// true true
}

func ExampleReader_Next() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle")
	_ = cfg.Write(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("a", "x"), run("b", "y")}})
	r, err := cfg.Open(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	runs := r.Runs()
	for {
		i, e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		if e.Seq >= 4 {
			fmt.Println(runs[i].ID, e.Seq, e.Kind)
		}
	}
	out, _ := r.Output(1)
	fmt.Printf("output of b: %s\n", out)
	// Output:
	// a 4 complete
	// a 5 produce
	// b 4 complete
	// b 5 produce
	// output of b: y
}

func ExampleBundle() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle")
	r := run("run-000", "+lodash 4.17.21")
	_ = cfg.Write(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{r}})
	b, _ := cfg.Load(context.Background(), p)
	fmt.Println(len(b.Runs[0].Events), events.Chain(b.Runs[0].Events, events.Nondeterministic) == events.Chain(r.Events, events.Nondeterministic))
	// Output: 5 true
}

func ExampleConfig_Load() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}})
	// An untrusted bundle is read within bounds.
	_, err := bundle.Config{MaxPayloadBytes: 40}.Load(context.Background(), p)
	var le *bundle.LimitError
	fmt.Println(errors.As(err, &le), le.Limit, errors.Is(err, bundle.ErrTooLarge))
	// Output: true MaxPayloadBytes true
}

func ExampleRun_Snapshot() {
	r := run("run-000", "x")
	snap, _ := r.Snapshot(2, &counter{})
	fmt.Println(snap.Run, snap.At, snap.Records, snap.Fold, string(snap.State))
	// Output: run-000 2 2 example/counter/1 {"at":2,"kinds":{"classify":1,"start":1}}
}

func ExampleSnapshot_Resume() {
	r := run("run-000", "x")
	snap, _ := r.Snapshot(3, &counter{})
	var partial, full counter
	_ = snap.Resume(r.Events, &partial)
	for _, e := range r.Events {
		_ = full.Apply(e)
	}
	fmt.Println(partial.At == full.At, len(partial.Kinds) == len(full.Kinds))
	// Output: true true
}

func ExampleConfig_FoldTo() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	r := run("run-000", "+lodash 4.17.21")
	snap, _ := r.Snapshot(2, &counter{})
	p := filepath.Join(dir, "run.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{r}, Snapshot: snap})
	var c counter // checked against the snapshot on the way
	if _, err := cfg.FoldTo(context.Background(), bundle.RunRef{Path: p}, 4, &c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.At, c.Kinds["complete"], c.Kinds["produce"])
	// Output: 4 1 0
}

// With no fold of its own, FoldTo uses the generic fold: per event kind,
// the count and the last event's seq, payload digest and payload.
func ExampleConfig_FoldTo_generic() {
	var cfg bundle.Config
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "+lodash 4.17.21")}})
	f, err := cfg.FoldTo(context.Background(), bundle.RunRef{Path: p}, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The generic fold's state is JSON; these are some of its members.
	var state struct {
		At    uint64 `json:"at"`
		Kinds []struct {
			Kind        string          `json:"kind"`
			Count       int             `json:"count"`
			LastSeq     uint64          `json:"last_seq"`
			LastPayload json.RawMessage `json:"last_payload"`
		} `json:"kinds"`
	}
	b, _ := json.Marshal(f)
	_ = json.Unmarshal(b, &state)
	fmt.Println(f.FoldName(), "at", state.At)
	for _, k := range state.Kinds {
		fmt.Println(k.Kind, k.Count, k.LastSeq, string(k.LastPayload))
	}
	// Output:
	// codegenie/bundle.kinds/1 at 2
	// start 1 1 {"advisory":"GHSA-1"}
	// classify 1 2 {"band":"accept"}
}

func ExampleDiffReport() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "runs.bundle.zst")
	b := &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "+lodash 4.17.21"), run("run-001", "+lodash 4.17.20")}}
	_ = cfg.WriteFile(context.Background(), p, b)
	d, err := cfg.Diff(context.Background(), bundle.RunRef{Path: p, Run: "run-000"}, bundle.RunRef{Path: p, Run: "run-001"})
	if err != nil {
		fmt.Println(err)
		return
	}
	dv := d.Divergence
	fmt.Println(dv.Index, dv.Kind, dv.Field, dv.Offset, "output at", d.Output.Offset)
	for _, c := range dv.Chain {
		fmt.Println("  ", c.Seq, c.Kind)
	}
	// Output:
	// 3 complete Payload 23 output at 14
	//    4 complete
	//    3 prompt
	//    2 classify
	//    1 start
}

func ExampleCompareRuns() {
	a, b := run("run-000", "same"), run("run-001", "same")
	b.Output = []byte("different")
	d := bundle.CompareRuns("", meta(), &a, "", meta(), &b)
	fmt.Println(d.Diverged(), d.Divergence == nil, d.Output.Offset)
	// Output: true true 0
}

func ExampleDiffReport_Text() {
	a, b := run("run-000", "+lodash 4.17.21"), run("run-001", "+lodash 4.17.20")
	var sb strings.Builder
	_ = bundle.CompareRuns("runs.bundle.zst", meta(), &a, "runs.bundle.zst", meta(), &b).Text(&sb)
	for _, l := range strings.Split(sb.String(), "\n") {
		if strings.HasPrefix(l, "first divergent") || strings.HasPrefix(l, "reproduce") || strings.HasPrefix(l, "outputs") {
			fmt.Println(l)
		}
	}
	// Output:
	// first divergent event: index 3, kind complete, seq 4, parent 3
	// outputs differ at byte 14 (a: 15 bytes, b: 15 bytes)
	// reproduce: go run github.com/codegenie/codegenie/cmd/bundle diff runs.bundle.zst -runs run-000,run-001
}

func ExampleMergeTapes() {
	evs := tape("x")
	m, _ := bundle.MergeTapes(evs[3:], evs[:4], evs)
	fmt.Println(len(m), events.Chain(m, 0) == events.Chain(evs, 0))
	_, err := bundle.MergeTapes(evs, tape("y"))
	fmt.Println(errors.Is(err, bundle.ErrConflict))
	// Output:
	// 5 true
	// true
}

func ExampleConfig_Diff() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "a.bundle.zst"), filepath.Join(dir, "b.bundle.zst")
	_ = cfg.WriteFile(context.Background(), a, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}})
	_ = cfg.WriteFile(context.Background(), b, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-007", "x")}})
	// Both bundles together hold at most 1 MiB of blobs.
	d, err := bundle.Config{MaxBufferedBlobs: 1 << 20}.Diff(context.Background(), bundle.RunRef{Path: a}, bundle.RunRef{Path: b})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.A.Run, d.B.Run, d.Diverged())
	// Output: run-000 run-007 false
}

func ExampleConfig_Open() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = cfg.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}})
	r, err := bundle.Config{MaxPayloadBytes: 64 << 20}.Open(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Form(), r.Metadata().Scenario, len(r.Runs()), r.Snapshot() == nil)
	// Output: file lodash 1 true
}

func ExampleBundle_Run() {
	b := &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x"), run("run-001", "y")}}
	fmt.Printf("%s %v\n", b.Run("run-001").Output, b.Run("run-009") == nil)
	// Output: y true
}

// Merge the bundles of two shards of one scenario from disk; a conflict
// names the bundles and the command that compares the two copies.
func ExampleConfig_Merge() {
	var cfg bundle.Config // the zero value: default bounds, replaces nothing
	dir := tempDir()
	defer os.RemoveAll(dir)
	a, b, c := filepath.Join(dir, "a.bundle.zst"), filepath.Join(dir, "b.bundle.zst"), filepath.Join(dir, "c.bundle.zst")
	_ = cfg.WriteFile(context.Background(), a, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "x")}})
	_ = cfg.WriteFile(context.Background(), b, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-001", "y")}})
	_ = cfg.WriteFile(context.Background(), c, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{run("run-000", "z")}})
	m, err := cfg.Merge(context.Background(), a, b)
	fmt.Println(err, len(m.Runs))
	_, err = cfg.Merge(context.Background(), a, c)
	fmt.Println(errors.Is(err, bundle.ErrConflict), strings.Contains(err.Error(), "compare them with: "))
	// Output:
	// <nil> 2
	// true true
}
