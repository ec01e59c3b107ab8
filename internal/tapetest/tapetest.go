package tapetest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
)

// Kinds are the kinds a realistic run records, one per step, in the order
// of the run.
type Kinds struct {
	Start, Query, Rank, Classify, Build, Request, Respond, Produce events.Kind
}

// List returns the kinds in the order of a run.
func (k Kinds) List() []events.Kind {
	return []events.Kind{k.Start, k.Query, k.Rank, k.Classify, k.Build, k.Request, k.Respond, k.Produce}
}

// Scenarios is the number of distinct scenarios (advisories) Realistic
// records; scenario s and s+Scenarios give the same run.
const Scenarios = 10

var packages = [Scenarios]string{"lodash", "minimist", "axios", "express", "jsonwebtoken", "semver", "tar", "ws", "qs", "follow-redirects"}

// ErrKind: a kind of Kinds is empty.
var ErrKind = errors.New("tapetest: empty kind")

// Realistic records one run shaped like the fallback pipeline's tape (its
// payload fields and typical sizes; the prompt is large enough to be
// stored as a bundle blob), eight events under the kinds k, each the
// child of the previous one, through a Recorder with a fixed clock and ID
// source so the nondeterministic fields are set. scenario picks the
// advisory; variant changes the clock, the IDs and the completion, so two
// variants diverge at the k.Respond event.
func Realistic(k Kinds, scenario, variant int) ([]events.Event, error) {
	for _, kind := range k.List() {
		if kind == "" {
			return nil, ErrKind
		}
	}
	scenario = ((scenario % Scenarios) + Scenarios) % Scenarios
	pkg := packages[scenario]
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(variant) * time.Second)
	id := 0
	rec := events.NewRecorder(events.Config{
		Clock: func() time.Time { clock = clock.Add(1733 * time.Microsecond); return clock },
		NewID: func() string { id++; return fmt.Sprintf("audit-%d-%04d", variant, id) },
	})
	var err error
	emit := func(parent uint64, kind events.Kind, p any) uint64 {
		if err != nil {
			return 0
		}
		var seq uint64
		seq, err = rec.EmitAfter(parent, kind, p)
		return seq
	}
	advisory := fmt.Sprintf("GHSA-%04x-cpcp-j695: Prototype pollution in %s. Versions of %s before 4.17.21 are vulnerable to prototype pollution via the merge, mergeWith and defaultsDeep functions, which can be tricked into adding or modifying properties of Object.prototype.", scenario*7919, pkg, pkg)
	root := emit(0, k.Start, map[string]any{
		"path": "/repo", "advisory_id": fmt.Sprintf("GHSA-%04x-cpcp-j695", scenario*7919), "files": 3, "prior_attempts": 0,
		"run_key":        map[string]any{"cassette_id": "cas-" + pkg, "store_digest": events.Sum([]byte("store")).String(), "repo_snapshot_sha": "9fceb02d0ae598e95dc970b74767f19372d61af8", "embedding_model_digest": events.Sum([]byte("emb")).String()},
		"run_key_digest": events.Sum([]byte(pkg)).String(),
		"pin":            map[string]any{"template_version": "prompt/v3", "transform_version": "diff/v1", "threshold_low": "0.55", "threshold_high": "0.8", "model": "claude-sonnet-4-5"},
	})
	q := emit(root, k.Query, map[string]any{"query": advisory, "query_digest": events.Sum([]byte(advisory)).String(), "k": 3, "store_size": 412, "embedding_model_digest": events.Sum([]byte("emb")).String()})
	var results, classified []map[string]any
	var examples strings.Builder
	for i := range 3 {
		exID := fmt.Sprintf("solved-%s-%d", pkg, i)
		score := 0.91 - float64(i)*0.07
		results = append(results, map[string]any{"id": exID, "score": score})
		classified = append(classified, map[string]any{"id": exID, "score": score, "band": "accept"})
		fmt.Fprintf(&examples, "### Solved example %d (%s, score %.2f)\nAdvisory: prototype pollution in %s < 4.17.%d\nFix:\n--- a/package.json\n+++ b/package.json\n@@ -12,7 +12,7 @@\n   \"dependencies\": {\n-    \"%s\": \"^4.17.%d\",\n+    \"%s\": \"^4.17.21\",\n     \"express\": \"^4.18.2\"\n   }\n", i+1, exID, score, pkg, 10+i, pkg, 10+i, pkg)
	}
	r := emit(q, k.Rank, map[string]any{"results": results})
	b := emit(r, k.Classify, map[string]any{"threshold_low": 0.55, "threshold_high": 0.8, "examples": classified, "top_band": "accept", "shown": 3})
	system := "You are a careful software engineer fixing a security advisory in a repository. Reply with a unified diff only. " +
		"Change as little as possible: bump the vulnerable dependency to the first fixed version, update lock files consistently, and do not reformat unrelated lines. " +
		"If the fix needs code changes, keep the public API unchanged. Follow the solved examples when they apply."
	user := "## Advisory\n" + advisory + "\n\n## Solved examples\n" + examples.String() +
		"\n## Files\n### package.json\n{\n  \"name\": \"web-app\",\n  \"version\": \"1.4.2\",\n  \"dependencies\": {\n    \"" + pkg + "\": \"^4.17.15\",\n    \"express\": \"^4.18.2\"\n  }\n}\n"
	p := emit(b, k.Build, map[string]any{"template_version": "prompt/v3", "prompt_digest": events.Sum([]byte(system + user)).String(), "system_bytes": len(system), "user_bytes": len(user), "examples": 3, "attempts": 0, "system": system, "user": user})
	rq := emit(p, k.Request, map[string]any{"settings": map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "temperature": 0}, "request_digest": events.Sum([]byte(user)).String()})
	diff := fmt.Sprintf("--- a/package.json\n+++ b/package.json\n@@ -3,7 +3,7 @@\n   \"version\": \"1.4.2\",\n   \"dependencies\": {\n-    \"%s\": \"^4.17.15\",\n+    \"%s\": \"^4.17.%d\",\n     \"express\": \"^4.18.2\"\n   }\n", pkg, pkg, 21+variant%3)
	rs := emit(rq, k.Respond, map[string]any{"text": diff, "text_digest": events.Sum([]byte(diff)).String(), "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn", "id": fmt.Sprintf("msg_%d", variant), "input_tokens": 1800 + len(user)/4, "output_tokens": len(diff) / 4})
	emit(rs, k.Produce, map[string]any{"diff": diff, "diff_digest": events.Sum([]byte(diff)).String(), "diff_bytes": len(diff), "files": []string{"package.json"}})
	if err != nil {
		return nil, err
	}
	return rec.Events(), nil
}

// Synthetic returns n events with payloadSize-byte JSON payloads
// (Payload) and the given kinds in turn: dense seqs from 1, each event the
// child of the previous one, with timestamps and audit IDs set.
func Synthetic(kinds []events.Kind, n, payloadSize int) []events.Event {
	evs := make([]events.Event, n)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range evs {
		p := Payload(i, payloadSize)
		evs[i] = events.Event{
			Seq: uint64(i + 1), Parent: uint64(i), Kind: kinds[i%len(kinds)],
			Payload: p, PayloadDigest: events.Sum(p),
			EmittedAt: base.Add(time.Duration(i) * time.Microsecond), AuditEventID: fmt.Sprintf("audit-%d", i),
		}
	}
	return evs
}

// Payload returns the JSON object {"i":i,"text":"..."} of size bytes (or
// a little more, when size is too small to hold it), its text a function
// of i.
func Payload(i, size int) []byte {
	p := fmt.Appendf(nil, `{"i":%d,"text":"`, i)
	for len(p) < size-2 {
		p = append(p, "abcdefghijklmnopqrstuvwxyz0123456789"[(i+len(p))%36])
	}
	return append(p, `"}`...)
}

// Event generates one event on its own: any fields, a PayloadDigest that
// matches the payload, and an EmittedAt that is either zero or any UnixNano
// in UTC.
var Event = rapid.Custom(func(t *rapid.T) events.Event {
	payload := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "payload")
	seq := rapid.Uint64Range(1, 1<<40).Draw(t, "seq")
	e := events.Event{
		Seq:           seq,
		Parent:        rapid.Uint64Range(0, seq-1).Draw(t, "parent"),
		Kind:          events.Kind(rapid.StringN(1, 20, -1).Draw(t, "kind")),
		Lane:          rapid.StringN(0, 10, -1).Draw(t, "lane"),
		Payload:       payload,
		PayloadDigest: events.Sum(payload),
		AuditEventID:  rapid.String().Draw(t, "audit"),
	}
	if rapid.Bool().Draw(t, "stamped") {
		e.EmittedAt = time.Unix(0, rapid.Int64().Draw(t, "nanos")).UTC()
	}
	return e
})
