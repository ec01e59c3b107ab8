package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/ledger"
)

// sealRaw seals fields as the entry after (seq-1, prev), whatever their
// shape, as a newer writer would: seq and prev set, hash over the
// canonical bytes without it. It returns the stored line and its hash, or
// ok false when fields cannot be encoded canonically.
func sealRaw(fields map[string]json.RawMessage, seq uint64, prev string) (line []byte, hash string, ok bool) {
	fields["seq"], _ = json.Marshal(seq)
	fields["prev"], _ = json.Marshal(prev)
	if prev == "" {
		delete(fields, "prev")
	}
	delete(fields, "hash")
	b, err := events.Canonical(fields)
	if err != nil {
		return nil, "", false
	}
	hash = events.Sum(b).String()
	fields["hash"], _ = json.Marshal(hash)
	line, err = events.Canonical(fields)
	return line, hash, err == nil
}

// newerLedger writes a file ledger of one schema-1 verdict followed by
// body (a JSON object of any shape) sealed as entry 2, and returns its
// path, or "" when body is not an object that can be sealed.
func newerLedger(t *testing.T, body []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	s, err := ledger.Open(context.Background(), path)
	require.NoError(t, err)
	first, err := s.Append(context.Background(), verdict("npm", ledger.Pass))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		return ""
	}
	line, _, ok := sealRaw(fields, 2, first.Hash)
	if !ok || bytes.IndexByte(line, '\n') >= 0 {
		return ""
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(append(line, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// TestFlakesCountsWhatANewerWriterWrote: a sealed entry of a newer schema
// with a verdict this version does not know is counted, not indexed.
func TestFlakesCountsWhatANewerWriterWrote(t *testing.T) {
	t.Parallel()
	path := newerLedger(t, []byte(`{"schema":3,"kind":"verdict","scenario":"npm","path":"fallback","verdict":"QUARANTINED","recorded_at":"2026-03-01T12:00:00Z"}`))
	s := open(t, path, &clock{})
	rep := verifyOK(t, s)
	require.Len(t, rep.Warnings, 2)

	fl, err := s.Flakes(context.Background(), 0)
	require.NoError(t, err)
	require.Equal(t, 1, fl.UnknownSchema)
	require.Equal(t, 1, fl.UnknownVerdict)
	require.Len(t, fl.Flakes, 1)
	require.Equal(t, 1, fl.Flakes[0].Unknown)
	require.Equal(t, 1, fl.Flakes[0].Verdicts[0].Count)
	require.True(t, fl.Flakes[0].Flaky())
	var b bytes.Buffer
	require.NoError(t, fl.Text(&b))
	require.Equal(t, `SCENARIO  PATH      PASS          NONDETERMINISTIC  BROKEN  UNKNOWN
npm       fallback  1 (seq 1..1)  0                 0       1
note: 1 verdict entries have a schema other than 1 or 2; their fields were read leniently (a newer ledger command reads them fully)
note: 1 verdicts are not PASS, NONDETERMINISTIC or BROKEN; they are counted under UNKNOWN (a newer ledger command knows them)
`, b.String())
}

// FuzzReaders: Verify and Flakes read a sealed entry of any shape after a
// good one without panicking, and render the same bytes twice.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		`{"schema":2,"kind":"verdict","scenario":"npm","verdict":"QUARANTINED","recorded_at":"2026-03-01T12:00:00Z"}`,
		`{"schema":3,"kind":"verdict","scenario":"npm","verdict":"QUARANTINED","recorded_at":"2026-03-01T12:00:00Z"}`,
		`{"schema":1,"kind":"verdict","scenario":"npm","verdict":"PASS","recorded_at":"2026-03-01T12:00:00Z"}`,
		`{"schema":3,"kind":"replay","scenario":"","verdict":"","replays":9,"replay":{"status":"new"}}`,
		`{"schema":1,"kind":"admin","admin":{"action":"retain","dropped_from":1,"dropped_to":5}}`,
		`{"schema":-1,"kind":"verdict","verdict":[1]}`,
		`{"kind":"verdict"}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		path := newerLedger(t, body)
		if path == "" {
			return
		}
		s, err := ledger.Open(context.Background(), path)
		require.NoError(t, err)
		defer s.Close()
		render := func() string {
			var b bytes.Buffer
			rep, err := s.Verify(context.Background())
			require.NoError(t, err)
			require.NoError(t, rep.Text(&b))
			if fl, err := s.Flakes(context.Background(), 0); err == nil {
				require.NoError(t, fl.Text(&b))
				require.LessOrEqual(t, len(fl.Flakes), 2)
			} else {
				require.ErrorIs(t, err, ledger.ErrDamaged)
			}
			return b.String()
		}
		require.Equal(t, render(), render())
	})
}
