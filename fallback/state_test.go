package fallback_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
)

func stateTape(t testing.TB) []events.Event {
	t.Helper()
	r := events.NewRecorder(events.Config{})
	for _, s := range []struct {
		kind    events.Kind
		payload any
	}{
		{fallback.KindRunStarted, map[string]any{"advisory_id": "GHSA-1"}},
		{fallback.KindPromptBuilt, map[string]any{"user": "bump lodash"}},
		{fallback.KindLLMRequested, map[string]any{"request_digest": "d1"}},
		{fallback.KindTransformFailed, map[string]any{"error": "no diff"}},
		{fallback.KindLLMRequested, map[string]any{"request_digest": "d2"}},
		{fallback.KindLLMResponded, map[string]any{"text": "+lodash 4.17.21"}},
		{fallback.KindTransformProduced, map[string]any{"diff": "+lodash 4.17.21"}},
		{"another.kind", map[string]any{}},
	} {
		_, err := r.Emit(s.kind, s.payload)
		require.NoError(t, err)
	}
	return r.Events()
}

func TestStateFold(t *testing.T) {
	evs := stateTape(t)
	st := fallback.NewState()
	for _, e := range evs {
		require.NoError(t, st.Apply(e))
	}
	require.Equal(t, uint64(8), st.At)
	require.Equal(t, uint64(2), st.Requests)
	require.JSONEq(t, `{"request_digest":"d2"}`, string(st.Request))
	require.JSONEq(t, `{"diff":"+lodash 4.17.21"}`, string(st.Transform))
	require.Nil(t, st.Failure, "a transform after a failure clears it")
	require.Equal(t, uint64(1), st.Unknown)
	require.Equal(t, evs[5].PayloadDigest, st.Last[fallback.KindLLMResponded])

	// The state goes through JSON unchanged (a snapshot holds it).
	b, err := events.Canonical(st)
	require.NoError(t, err)
	back := fallback.NewState()
	require.NoError(t, json.Unmarshal(b, back))
	again, err := events.Canonical(back)
	require.NoError(t, err)
	require.Equal(t, string(b), string(again))

	require.Error(t, st.Apply(evs[2]), "out of order")
	bad := events.Event{Seq: 9, Parent: 8, Kind: fallback.KindLLMResponded, Payload: []byte("not json")}
	require.NoError(t, st.Apply(bad))
	_, err = events.Canonical(st)
	require.ErrorContains(t, err, "llm.responded payload of the run is not JSON")
}

func ExampleState() {
	r := events.NewRecorder(events.Config{})
	_, _ = r.Emit(fallback.KindPromptBuilt, map[string]string{"user": "bump lodash"})
	_, _ = r.Emit(fallback.KindLLMRequested, map[string]string{"request_digest": "d"})
	_, _ = r.Emit(fallback.KindLLMResponded, map[string]string{"text": "+lodash 4.17.21"})
	st := fallback.NewState()
	for _, e := range r.Events() {
		if err := st.Apply(e); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(st.FoldName(), st.At, st.Requests, string(st.Response))
	// Output: codegenie/fallback.State/1 3 1 {"text":"+lodash 4.17.21"}
}
