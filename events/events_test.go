package events_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/tapetest"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"map keys sorted", map[string]int{"b": 2, "a": 1, "c": 3}, `{"a":1,"b":2,"c":3}`},
		{"struct keys sorted", struct {
			Z string `json:"z"`
			A string `json:"a"`
		}{"z", "a"}, `{"a":"a","z":"z"}`},
		{"nested", map[string]any{"x": []any{map[string]int{"q": 1, "p": 2}}}, `{"x":[{"p":2,"q":1}]}`},
		{"no html escaping", "<a&b>", `"<a&b>"`},
		{"float shortest", func() float64 { a, b := 0.1, 0.2; return a + b }(), `0.30000000000000004`},
		{"float exponent", 1e21, `1e+21`},
		{"small float", 1e-7, `1e-7`},
		{"integral float", 3.0, `3`},
		{"big int", uint64(math.MaxUint64), `18446744073709551615`},
		{"negative int", int64(math.MinInt64), `-9223372036854775808`},
		{"bytes are base64", []byte("hi"), `"aGk="`},
		{"unicode kept", "héllo\u2028", `"héllo\u2028"`},
		{"raw message recanonicalised", json.RawMessage(`{ "b" : 1.50, "a": [ true , null ] }`), `{"a":[true,null],"b":1.5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := events.Canonical(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
}

func TestCanonicalRejects(t *testing.T) {
	_, err := events.Canonical(math.NaN())
	require.Error(t, err)
	_, err = events.Canonical(json.RawMessage(`{"a":1} {"b":2}`))
	require.ErrorContains(t, err, "trailing data")
	_, err = events.Canonical(json.RawMessage(`{"a":`))
	require.Error(t, err)
}

// The canonical bytes of a map never depend on insertion order.
func TestCanonicalMapOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfDistinct(rapid.String(), rapid.ID[string]).Draw(t, "keys")
		perm := rapid.Permutation(keys).Draw(t, "perm")
		a, b := map[string]int{}, map[string]int{}
		for i, k := range keys {
			a[k] = i
		}
		for _, k := range perm {
			for i, k2 := range keys {
				if k2 == k {
					b[k] = i
				}
			}
		}
		ca, err := events.Canonical(a)
		require.NoError(t, err)
		cb, err := events.Canonical(b)
		require.NoError(t, err)
		require.Equal(t, ca, cb)
		again, err := events.Canonical(json.RawMessage(ca))
		require.NoError(t, err)
		require.Equal(t, ca, again, "canonical form must be a fixed point")
	})
}

func TestVerify(t *testing.T) {
	good := events.Event{Seq: 2, Parent: 1, Kind: kindRequested, Payload: []byte(`{}`)}
	good.PayloadDigest = events.Sum(good.Payload)
	require.NoError(t, good.Verify())
	tests := []struct {
		name   string
		mutate func(*events.Event)
		want   string
	}{
		{"seq zero", func(e *events.Event) { e.Seq = 0 }, "seq 0"},
		{"empty kind", func(e *events.Event) { e.Kind = "" }, "empty kind"},
		{"parent after", func(e *events.Event) { e.Parent = 2 }, "does not come before"},
		{"digest mismatch", func(e *events.Event) { e.Payload = []byte(`{"x":1}`) }, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good
			tt.mutate(&e)
			require.ErrorContains(t, e.Verify(), tt.want)
		})
	}
}

func TestChainDigestIgnoresNondeterministicFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := rapid.SliceOfN(tapetest.Event, 1, 8).Draw(t, "events")
		other := make([]events.Event, len(evs))
		for i, e := range evs {
			e.EmittedAt = time.Unix(int64(i)*7, 0)
			e.AuditEventID = fmt.Sprint("audit-", i)
			other[i] = e
		}
		require.Equal(t, events.Chain(evs, events.Nondeterministic), events.Chain(other, events.Nondeterministic))
		// Every deterministic field is covered.
		i := rapid.IntRange(0, len(evs)-1).Draw(t, "index")
		changed := append([]events.Event(nil), evs...)
		switch rapid.IntRange(0, 4).Draw(t, "field") { // payload: through its digest
		case 0:
			changed[i].Seq++
		case 1:
			changed[i].Parent++
		case 2:
			changed[i].Kind += "x"
		case 3:
			changed[i].Lane += "x"
		case 4:
			changed[i].Payload = append(append([]byte(nil), changed[i].Payload...), 'x')
			changed[i].PayloadDigest = events.Sum(changed[i].Payload)
		}
		require.NotEqual(t, events.Chain(evs, events.Nondeterministic), events.Chain(changed, events.Nondeterministic))
	})
}

func TestFieldByName(t *testing.T) {
	for _, name := range []string{"EmittedAt", "AuditEventID"} {
		f, err := events.FieldByName(name)
		require.NoError(t, err)
		require.Equal(t, name, f.String())
	}
	_, err := events.FieldByName("Payload")
	require.ErrorContains(t, err, "not a strippable")
	require.Equal(t, "EmittedAt|AuditEventID", events.Nondeterministic.String())
}

func TestDigestText(t *testing.T) {
	d := events.Sum([]byte("x"))
	var p events.Digest
	require.NoError(t, p.UnmarshalText([]byte(d.String())))
	require.Equal(t, d, p)
	require.ErrorContains(t, p.UnmarshalText([]byte("abc")), "64 hex digits")
	require.Error(t, p.UnmarshalText([]byte(strings.Repeat("zz", 32))))
}

func TestRecorderParentMustExist(t *testing.T) {
	r := events.NewRecorder(events.Config{})
	_, err := r.EmitAfter(1, kindStarted, nil)
	require.ErrorContains(t, err, "does not exist yet")
	seq, err := r.EmitAfter(0, kindStarted, map[string]string{"k": "v"})
	require.NoError(t, err)
	require.Equal(t, uint64(1), seq)
}

func TestEmitChainsParentsByDefault(t *testing.T) {
	r := events.NewRecorder(events.Config{})
	for _, k := range []events.Kind{kindStarted, kindQueried, kindRanked} {
		_, err := r.Emit(k, nil)
		require.NoError(t, err)
	}
	f := r.Fork(2)
	require.NoError(t, f.Lane("x").Emit(kindRanked, 1))
	_, err := f.Join()
	require.NoError(t, err)
	seq, err := r.Emit(kindProduced, nil)
	require.NoError(t, err)
	var parents []uint64
	for _, e := range r.Events() {
		parents = append(parents, e.Parent)
	}
	require.Equal(t, []uint64{0, 1, 2, 2, 4}, parents, "the root, then each event's parent is the one before it (the lane's first is the fork's)")
	require.Equal(t, uint64(5), seq)
	_, err = r.EmitAfter(1, kindFailed, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(1), r.Events()[5].Parent, "explicit parents stay possible")
}

// TestLaneEmitNeverLosesAnEvent races Join against writers that emit
// until they are refused: every Emit that returned nil must be on the
// tape, and every refusal is ErrJoined.
func TestLaneEmitNeverLosesAnEvent(t *testing.T) {
	for range 20 {
		r := events.NewRecorder(events.Config{})
		f := r.Fork(0)
		const writers = 8
		var wg sync.WaitGroup
		var accepted atomic.Int64
		started := make(chan struct{}, writers)
		for w := range writers {
			wg.Go(func() {
				l := f.Lane(fmt.Sprint("lane-", w))
				for i := 0; i < 300; i++ {
					if err := l.Emit(kindRanked, i); err != nil {
						require.ErrorIs(t, err, events.ErrJoined)
						return
					}
					accepted.Add(1)
					if i == 0 {
						started <- struct{}{}
					}
				}
			})
		}
		for range writers {
			<-started
		}
		_, err := f.Join()
		require.NoError(t, err)
		wg.Wait()
		require.ErrorIs(t, f.Lane("late").Emit(kindRanked, 0), events.ErrJoined, "a lane taken after Join refuses events")
		require.Equal(t, int(accepted.Load()), r.Len(), "an accepted event was dropped")
	}
}

func TestRecorderStampsInjectedClockAndIDs(t *testing.T) {
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	n := 0
	r := events.NewRecorder(events.Config{
		Clock: func() time.Time { return at },
		NewID: func() string { n++; return fmt.Sprint("id-", n) },
	})
	_, err := r.EmitAfter(0, kindStarted, nil)
	require.NoError(t, err)
	evs := r.Events()
	require.Equal(t, at, evs[0].EmittedAt)
	require.Equal(t, "id-1", evs[0].AuditEventID)
}

// runLanes records a root, a fork with the given lanes (each emitting its
// items) run concurrently, and a final event after the join.
func runLanes(t require.TestingT, lanes map[string][]int, yield func()) []events.Event {
	r := events.NewRecorder(events.Config{})
	root, err := r.EmitAfter(0, kindStarted, "root")
	require.NoError(t, err)
	f := r.Fork(root)
	var wg sync.WaitGroup
	for name, items := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := f.Lane(name)
			for _, it := range items {
				yield()
				require.NoError(t, l.Emit(kindRanked, it))
			}
		}()
	}
	wg.Wait()
	last, err := f.Join()
	require.NoError(t, err)
	_ = last
	_, err = r.EmitAfter(uint64(r.Len()), kindProduced, "done")
	require.NoError(t, err)
	return r.Events()
}

// The tape order depends on (fork point, lane name, lane seq), never on
// goroutine interleaving.
func TestLaneOrderIgnoresInterleaving(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lanes := rapid.MapOfN(rapid.StringMatching(`[a-z]{1,4}`), rapid.SliceOfN(rapid.IntRange(0, 99), 0, 5), 1, 5).Draw(t, "lanes")
		delays := rapid.SliceOfN(rapid.IntRange(0, 3), 20, 20).Draw(t, "yields")
		var mu sync.Mutex
		k := 0
		yield := func() {
			mu.Lock()
			d := delays[k%len(delays)]
			k++
			mu.Unlock()
			for range d {
				time.Sleep(time.Microsecond)
			}
		}
		a := runLanes(t, lanes, yield)
		b := runLanes(t, lanes, func() {})
		require.Equal(t, events.Chain(a, events.Nondeterministic), events.Chain(b, events.Nondeterministic))
		for i, e := range a {
			require.Equal(t, uint64(i+1), e.Seq)
			require.NoError(t, e.Verify())
		}
	})
}

func TestJoinTwice(t *testing.T) {
	r := events.NewRecorder(events.Config{})
	f := r.Fork(0)
	l := f.Lane("a")
	require.NoError(t, l.Emit(kindRanked, 1))
	last, err := f.Join()
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{"a": 1}, last)
	_, err = f.Join()
	require.ErrorIs(t, err, events.ErrJoined)
	require.ErrorIs(t, l.Emit(kindRanked, 2), events.ErrJoined)
	evs := r.Events()
	require.Len(t, evs, 1)
	require.Equal(t, uint64(0), evs[0].Parent)
	require.Equal(t, "a", evs[0].Lane)
}

func BenchmarkChain256(b *testing.B) {
	payload := []byte(strings.Repeat("p", 256))
	e := events.Event{Seq: 1, Kind: kindBuilt, Payload: payload, PayloadDigest: events.Sum(payload)}
	evs := []events.Event{e}
	b.ReportAllocs()
	for b.Loop() {
		events.Chain(evs, 0)
	}
}

func BenchmarkCanonical(b *testing.B) {
	v := map[string]any{"ids": []string{"ex-001", "ex-002"}, "scores": []float64{0.91, 0.42}, "k": 2}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := events.Canonical(v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestJoinOpen(t *testing.T) {
	r := events.NewRecorder(events.Config{})
	seq, err := r.Emit("start", nil)
	require.NoError(t, err)
	joined, open := r.Fork(seq), r.Fork(seq)
	require.NoError(t, joined.Lane("a").Emit("x", 1))
	_, err = joined.Join()
	require.NoError(t, err)
	require.NoError(t, open.Lane("b").Emit("y", 2))
	require.Equal(t, 1, r.JoinOpen(), "only the fork left open")
	require.Equal(t, 3, r.Len())
	require.Zero(t, r.JoinOpen())
	require.ErrorIs(t, open.Lane("b").Emit("z", 3), events.ErrJoined)
}
