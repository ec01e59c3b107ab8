package replay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/replay"
)

// run records a small run whose completion is the given text.
func run(completion string) []events.Event {
	r := events.NewRecorder(events.Options{})
	root, _ := r.EmitAfter(0, kindStarted, map[string]string{"run_key": "rk-1"})
	band, _ := r.EmitAfter(root, kindClassified, map[string]string{"band": "accept"})
	p, _ := r.EmitAfter(band, kindBuilt, map[string]string{"prompt": "bump lodash"})
	resp, _ := r.EmitAfter(p, kindResponded, map[string]string{"completion": completion})
	_, _ = r.EmitAfter(resp, kindProduced, map[string]string{"diff": completion})
	return r.Events()
}

func meta() replay.Metadata {
	return replay.Metadata{
		Pin:      replay.Pin{RunKey: "rk-1", CassetteID: "c1", StoreDigest: "s1", RepoSnapshotSHA: "abc", EmbeddingModelDigest: "e1"},
		Scenario: "lodash", GoVersion: "go1.26.8", ToolVersion: "v0.1.0", Status: replay.StatusCaptured,
	}
}

func tempDir() string {
	d, err := os.MkdirTemp("", "replay-example-")
	if err != nil {
		panic(err)
	}
	return d
}

func ExampleWrite() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	b := &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")}
	if err := replay.Write(context.Background(), filepath.Join(dir, "run.bundle"), b); err != nil {
		fmt.Println(err)
		return
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "run.bundle"))
	for _, e := range ents {
		fmt.Println(e.Name())
	}
	// Output:
	// events.log
	// manifest.json
	// metadata.json
}

func ExampleWriteFile() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	b := &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")}
	p1, p2 := filepath.Join(dir, "a.bundle.zst"), filepath.Join(dir, "b.bundle.zst")
	_ = replay.WriteFile(context.Background(), p1, b)
	_ = replay.WriteFile(context.Background(), p2, b)
	x, _ := os.ReadFile(p1)
	y, _ := os.ReadFile(p2)
	fmt.Println("same bytes:", string(x) == string(y))
	// Output: same bytes: true
}

func ExampleWriteRun() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	m := meta()
	m.Run = "iteration-07"
	p, err := replay.WriteRun(dir, m, run("+lodash 4.17.21"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Ext(p), filepath.Base(p)[:len("lodash-iteration-07-")])
	// Output: .zst lodash-iteration-07-
}

func ExampleVerify() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = replay.WriteFile(context.Background(), p, &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")})
	rep, err := replay.Verify(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Form, rep.Metadata.Status, rep.Events, "events")

	// A truncated copy is rejected with the file that is cut short.
	raw, _ := os.ReadFile(p)
	_ = os.WriteFile(p, raw[:len(raw)-8], 0o644)
	_, err = replay.Verify(context.Background(), p)
	var be *replay.BundleError
	fmt.Println(errors.Is(err, replay.ErrTruncated), errors.As(err, &be))
	// Output:
	// file CAPTURED 5 events
	// true true
}

func ExampleOpen() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle")
	_ = replay.Write(context.Background(), p, &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")})
	r, err := replay.Open(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Seq, e.Kind)
	}
	// Output:
	// 1 run.started
	// 2 band.classified
	// 3 prompt.built
	// 4 llm.responded
	// 5 transform.produced
}

func ExampleLoad() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run.bundle")
	evs := run("+lodash 4.17.21")
	_ = replay.Write(context.Background(), p, &replay.Bundle{Metadata: meta(), Events: evs})
	b, _ := replay.Load(context.Background(), p)
	fmt.Println(len(b.Events), events.ChainDigest(b.Events) == events.ChainDigest(evs))
	// Output: 5 true
}

func ExampleReconstruct() {
	st, _ := replay.Reconstruct(run("+lodash 4.17.21"))
	fmt.Printf("band=%s prompt=%q completion=%q at=%d\n", st.Band, st.Prompt, st.Completion, st.At)
	// Output: band=accept prompt="bump lodash" completion="+lodash 4.17.21" at=5
}

func ExampleReconstructFrom() {
	evs := run("+lodash 4.17.21")
	snap, _ := replay.MakeSnapshot(evs, 3)
	partial, _ := replay.ReconstructFrom(snap, evs)
	full, _ := replay.Reconstruct(evs)
	fmt.Println(partial.Completion == full.Completion, partial.At == full.At)
	// Output: true true
}

func ExampleMakeSnapshot() {
	snap, _ := replay.MakeSnapshot(run("x"), 2)
	fmt.Println(snap.At, snap.Records, snap.State.Band)
	// Output: 2 2 accept
}

func ExampleState_Apply() {
	st := replay.NewState()
	for _, e := range run("+lodash 4.17.21")[:3] {
		_ = st.Apply(e)
	}
	fmt.Println(st.At, st.Prompt)
	// Output: 3 bump lodash
}

func ExampleDiff() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "a.bundle.zst"), filepath.Join(dir, "b.bundle.zst")
	_ = replay.WriteFile(context.Background(), a, &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")})
	_ = replay.WriteFile(context.Background(), b, &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.20")})
	d, err := replay.Diff(context.Background(), a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	dv := d.Divergence
	fmt.Println(dv.Index, dv.Kind, dv.Field, dv.Offset)
	for _, c := range dv.Chain {
		fmt.Println("  ", c.Seq, c.Kind)
	}
	// Output:
	// 3 llm.responded Payload 29
	//    4 llm.responded
	//    3 prompt.built
	//    2 band.classified
	//    1 run.started
}

func ExampleCompareBundles() {
	a := &replay.Bundle{Metadata: meta(), Events: run("same")}
	b := &replay.Bundle{Metadata: meta(), Events: run("same")}
	d := replay.CompareBundles("", a, "", b)
	fmt.Println(d.Diverged())
	// Output: false
}

func ExampleMerge() {
	evs := run("x")
	m, _ := replay.Merge(evs[3:], evs[:4], evs)
	fmt.Println(len(m), events.Chain(m) == events.Chain(evs))

	other := run("y")
	_, err := replay.Merge(evs, other)
	fmt.Println(errors.Is(err, replay.ErrConflict))
	// Output:
	// 5 true
	// true
}

func ExampleDiffReport_Text() {
	a := &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.21")}
	b := &replay.Bundle{Metadata: meta(), Events: run("+lodash 4.17.20")}
	var sb strings.Builder
	_ = replay.CompareBundles("a.bundle.zst", a, "b.bundle.zst", b).Text(&sb)
	for _, l := range strings.Split(sb.String(), "\n") {
		if strings.HasPrefix(l, "first divergent") || strings.HasPrefix(l, "reproduce") || strings.Contains(l, "differing field") {
			fmt.Println(l)
		}
	}
	// Output:
	// first divergent event: index 3, kind llm.responded, seq 4, parent 3
	//   differing field: Payload
	// reproduce: go run github.com/codegenie/codegenie/cmd/replay diff a.bundle.zst b.bundle.zst
}

func ExampleReplayTo() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	evs := run("+lodash 4.17.21")
	snap, _ := replay.MakeSnapshot(evs, 2)
	p := filepath.Join(dir, "run.bundle.zst")
	_ = replay.WriteFile(context.Background(), p, &replay.Bundle{Metadata: meta(), Events: evs, Snapshot: snap})
	st, err := replay.ReplayTo(context.Background(), p, 4) // starts from the snapshot at seq 2
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.At, st.Band, st.Completion)
	// Output: 4 accept +lodash 4.17.21
}
