package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codegenie/codegenie/events"
)

// prefetchTape spans several batches and mixes inline payloads, blobs and
// empty payloads.
func prefetchTape(t testing.TB) []events.Event {
	t.Helper()
	evs := syntheticTape(t, 3*batchEvents+17, 64)
	for i := range evs {
		switch {
		case i%97 == 5:
			evs[i].Payload = syntheticPayload(i, blobThreshold+i)
		case i%31 == 7:
			evs[i].Payload = nil
		}
		evs[i].PayloadDigest = events.Sum(evs[i].Payload)
	}
	return evs
}

// sequential reads the bundle the way Verify does, one record at a time on
// the caller's goroutine, keeping the events: what Next must agree with.
func sequential(t testing.TB, path string) ([]events.Event, error) {
	t.Helper()
	r, err := open(context.Background(), path, true, Config{}, Config{}.newBudget())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []events.Event
	for {
		err := r.step()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		e := r.event()
		e.Payload = append([]byte{}, e.Payload...)
		out = append(out, e)
	}
}

// drain reads every event with Next, keeping the ones before the error.
func drain(t testing.TB, path string) ([]events.Event, error) {
	t.Helper()
	r, err := Config{}.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []events.Event
	for {
		_, e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			// Sticky: asking again gives the same error.
			_, _, again := r.Next()
			require.Equal(t, err, again)
			return out, err
		}
		out = append(out, e)
	}
}

// TestPrefetchAgreesWithSequentialReading: validating ahead changes when a
// record is checked, never which records come out or which error: on an
// intact bundle and on bundles broken in the first, a middle and the last
// batch, Next gives exactly the events and the error a sequential read
// gives.
func TestPrefetchAgreesWithSequentialReading(t *testing.T) {
	evs := prefetchTape(t)
	dir, file := writeBoth(t, single(evs))
	flipPayload := func(idx int) func(h []byte, fr [][]byte, tr []byte) []byte {
		return func(h []byte, fr [][]byte, tr []byte) []byte {
			f := append([]byte{}, fr[idx]...)
			f[len(f)-40] ^= 1 // inside the record, before its chain hash
			fr[idx] = f
			return joinLog(h, fr, tr)
		}
	}
	bundles := map[string]string{"intact dir": dir, "intact file": file}
	for _, idx := range []int{3, batchEvents + 40, len(evs) - 2} {
		bundles[fmt.Sprintf("record %d edited", idx)] = editDir(t, dir, func(d string) { rewriteLog(t, d, flipPayload(idx)) })
	}
	bundles["log cut in the third batch"] = editDir(t, dir, func(d string) {
		rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
			return joinLog(h, fr[:2*batchEvents+9], nil)
		})
	})
	for name, p := range bundles {
		t.Run(name, func(t *testing.T) {
			want, wantErr := sequential(t, p)
			got, gotErr := drain(t, p)
			require.Equal(t, len(want), len(got))
			require.Equal(t, want, got)
			if wantErr == nil {
				require.NoError(t, gotErr)
				require.Equal(t, withEmptyPayloads(evs), got)
				return
			}
			require.Error(t, gotErr)
			require.Equal(t, wantErr.Error(), gotErr.Error())
			var a, b *BundleError
			require.ErrorAs(t, wantErr, &a)
			require.ErrorAs(t, gotErr, &b)
			require.Equal(t, a.Record, b.Record)
		})
	}
}

// TestNextPayloadsAreOwned: payloads share chunks of memory, but each is
// the caller's: writing to or appending to one changes no other.
func TestNextPayloadsAreOwned(t *testing.T) {
	evs := syntheticTape(t, 40, 100)
	dir, _ := writeBoth(t, single(evs))
	got, err := drain(t, dir)
	require.NoError(t, err)
	for i := range got {
		got[i].Payload = append(got[i].Payload, "garbage"...)
		got[i].Payload[0] = 'X'
	}
	for i := range got {
		require.Equal(t, append([]byte{'X'}, evs[i].Payload[1:]...), got[i].Payload[:len(evs[i].Payload)], "event %d", i)
		require.Equal(t, "garbage", string(got[i].Payload[len(evs[i].Payload):]), "event %d", i)
	}
}

// TestCloseStopsPrefetching: closing a Reader in the middle of a long log
// stops its goroutine (Close waits for it), and the Reader then refuses
// to read.
func TestCloseStopsPrefetching(t *testing.T) {
	dir, file := writeBoth(t, single(syntheticTape(t, 20*batchEvents, 64)))
	for _, p := range []string{dir, file} {
		before := goleak.IgnoreCurrent()
		r, err := Config{}.Open(context.Background(), p)
		require.NoError(t, err)
		_, _, err = r.Next()
		require.NoError(t, err)
		require.NoError(t, r.Close())
		_, _, err = r.Next()
		require.ErrorIs(t, err, fs.ErrClosed)
		require.NoError(t, r.Close(), "Close twice")
		goleak.VerifyNone(t, before)
	}
}

// withEmptyPayloads returns evs with every empty payload as a non-nil empty
// slice, as a reader returns it.
func withEmptyPayloads(evs []events.Event) []events.Event {
	out := append([]events.Event{}, evs...)
	for i := range out {
		if len(out[i].Payload) == 0 {
			out[i].Payload = []byte{}
		}
	}
	return out
}

// TestRepeatedBlobs: a blob referred to by many records (equal runs have
// equal prompts) is read and hashed once and its bytes are shared by every
// record that refers to it: a reference costs no memory.
func TestRepeatedBlobs(t *testing.T) {
	big := syntheticPayload(0, 3*blobThreshold)
	evs := syntheticTape(t, 2*batchEvents, 64)
	for i := range evs {
		if i%3 == 0 {
			evs[i].Payload, evs[i].PayloadDigest = big, events.Sum(big)
		}
	}
	dir, file := writeBoth(t, single(evs))
	for _, p := range []string{dir, file} {
		got, err := drain(t, p)
		require.NoError(t, err)
		require.Equal(t, withEmptyPayloads(evs), got)
		require.Same(t, &got[0].Payload[0], &got[3].Payload[0], "records referring to one blob share its bytes")
	}
	r, err := Config{}.Open(context.Background(), dir)
	require.NoError(t, err)
	defer r.Close()
	for {
		if _, _, err := r.Next(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	require.Len(t, r.blobs.kept, 1, "the directory form keeps the verified blob")
}
