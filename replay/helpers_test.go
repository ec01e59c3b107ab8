package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// realisticRun records one run shaped like package fallback's tape (same
// kinds, payload fields and typical sizes), through a Recorder with a clock
// and an ID source so the nondeterministic fields are set. variant changes
// the completion, so two variants diverge at llm.responded.
func realisticRun(t testing.TB, variant int) []events.Event {
	t.Helper()
	return realisticRunOf(t, 0, variant)
}

var packages = []string{"lodash", "minimist", "axios", "express", "jsonwebtoken", "semver", "tar", "ws", "qs", "follow-redirects"}

// realisticRunOf is realisticRun for one of several scenarios (advisories).
func realisticRunOf(t testing.TB, scenario, variant int) []events.Event {
	t.Helper()
	pkg := packages[scenario%len(packages)]
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(variant) * time.Second)
	id := 0
	rec := events.NewRecorder(events.Options{
		Clock: func() time.Time { clock = clock.Add(1733 * time.Microsecond); return clock },
		NewID: func() string { id++; return fmt.Sprintf("audit-%d-%04d", variant, id) },
	})
	emit := func(parent uint64, k events.Kind, p any) uint64 {
		seq, err := rec.EmitAfter(parent, k, p)
		require.NoError(t, err)
		return seq
	}
	advisory := fmt.Sprintf("GHSA-%04x-cpcp-j695: Prototype pollution in %s. Versions of %s before 4.17.21 are vulnerable to prototype pollution via the merge, mergeWith and defaultsDeep functions, which can be tricked into adding or modifying properties of Object.prototype.", scenario*7919, pkg, pkg)
	root := emit(0, kindStarted, map[string]any{
		"path": "/repo", "advisory_id": fmt.Sprintf("GHSA-%04x-cpcp-j695", scenario*7919), "files": 3, "prior_attempts": 0,
		"run_key":        map[string]any{"cassette_id": "cas-" + pkg, "store_digest": events.Sum([]byte("store")).String(), "repo_snapshot_sha": "9fceb02d0ae598e95dc970b74767f19372d61af8", "embedding_model_digest": events.Sum([]byte("emb")).String()},
		"run_key_digest": events.Sum([]byte(pkg)).String(),
		"pin":            map[string]any{"template_version": "prompt/v3", "transform_version": "diff/v1", "threshold_low": "0.55", "threshold_high": "0.8", "model": "claude-sonnet-4-5"},
	})
	q := emit(root, kindQueried, map[string]any{"query": advisory, "query_digest": events.Sum([]byte(advisory)).String(), "k": 3, "store_size": 412, "embedding_model_digest": events.Sum([]byte("emb")).String()})
	var results, classified []map[string]any
	var examples strings.Builder
	for i := range 3 {
		exID := fmt.Sprintf("solved-%s-%d", pkg, i)
		score := 0.91 - float64(i)*0.07
		results = append(results, map[string]any{"id": exID, "score": score})
		classified = append(classified, map[string]any{"id": exID, "score": score, "band": "accept"})
		fmt.Fprintf(&examples, "### Solved example %d (%s, score %.2f)\nAdvisory: prototype pollution in %s < 4.17.%d\nFix:\n--- a/package.json\n+++ b/package.json\n@@ -12,7 +12,7 @@\n   \"dependencies\": {\n-    \"%s\": \"^4.17.%d\",\n+    \"%s\": \"^4.17.21\",\n     \"express\": \"^4.18.2\"\n   }\n", i+1, exID, score, pkg, 10+i, pkg, 10+i, pkg)
	}
	r := emit(q, kindRanked, map[string]any{"results": results})
	b := emit(r, kindClassified, map[string]any{"threshold_low": 0.55, "threshold_high": 0.8, "examples": classified, "top_band": "accept", "shown": 3})
	system := "You are a careful software engineer fixing a security advisory in a repository. Reply with a unified diff only. " +
		"Change as little as possible: bump the vulnerable dependency to the first fixed version, update lock files consistently, and do not reformat unrelated lines. " +
		"If the fix needs code changes, keep the public API unchanged. Follow the solved examples when they apply."
	user := "## Advisory\n" + advisory + "\n\n## Solved examples\n" + examples.String() +
		"\n## Files\n### package.json\n{\n  \"name\": \"web-app\",\n  \"version\": \"1.4.2\",\n  \"dependencies\": {\n    \"" + pkg + "\": \"^4.17.15\",\n    \"express\": \"^4.18.2\"\n  }\n}\n"
	p := emit(b, kindBuilt, map[string]any{"template_version": "prompt/v3", "prompt_digest": events.Sum([]byte(system + user)).String(), "system_bytes": len(system), "user_bytes": len(user), "examples": 3, "attempts": 0, "system": system, "user": user})
	rq := emit(p, kindRequested, map[string]any{"settings": map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "temperature": 0}, "request_digest": events.Sum([]byte(user)).String()})
	diff := fmt.Sprintf("--- a/package.json\n+++ b/package.json\n@@ -3,7 +3,7 @@\n   \"version\": \"1.4.2\",\n   \"dependencies\": {\n-    \"%s\": \"^4.17.15\",\n+    \"%s\": \"^4.17.%d\",\n     \"express\": \"^4.18.2\"\n   }\n", pkg, pkg, 21+variant%3)
	rs := emit(rq, kindResponded, map[string]any{"text": diff, "text_digest": events.Sum([]byte(diff)).String(), "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn", "id": fmt.Sprintf("msg_%d", variant), "input_tokens": 1800 + len(user)/4, "output_tokens": len(diff) / 4})
	emit(rs, kindProduced, map[string]any{"diff": diff, "diff_digest": events.Sum([]byte(diff)).String(), "diff_bytes": len(diff), "files": []string{"package.json"}})
	return rec.Events()
}

// syntheticTape returns n events with payloadSize-byte JSON payloads, dense
// seqs, each the child of the previous, with timestamps and IDs set.
func syntheticTape(t testing.TB, n, payloadSize int) []events.Event {
	t.Helper()
	return syntheticEvents(n, payloadSize)
}

// syntheticEvents is syntheticTape outside a test.
func syntheticEvents(n, payloadSize int) []events.Event {
	kinds := []events.Kind{kindStarted, kindQueried, kindRanked, kindClassified, kindBuilt, kindRequested, kindResponded, kindProduced}
	evs := make([]events.Event, n)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range evs {
		p := syntheticPayload(i, payloadSize)
		evs[i] = events.Event{
			Seq: uint64(i + 1), Parent: uint64(i), Kind: kinds[i%len(kinds)],
			Payload: p, PayloadDigest: events.Sum(p),
			EmittedAt: base.Add(time.Duration(i) * time.Microsecond), AuditEventID: fmt.Sprintf("audit-%d", i),
		}
	}
	return evs
}

func syntheticPayload(i, size int) []byte {
	p := fmt.Appendf(nil, `{"i":%d,"text":"`, i)
	for len(p) < size-2 {
		p = append(p, "abcdefghijklmnopqrstuvwxyz0123456789"[(i+len(p))%36])
	}
	return append(p, `"}`...)
}

func testMeta() Metadata {
	return Metadata{Scenario: "lodash-prototype-pollution", GoVersion: "go1.26.8", ToolVersion: "test"}
}

func testPin() map[string]string {
	return map[string]string{"run_key": "rk-0123456789abcdef", "cassette_id": "cas-1", "store_digest": "store-1"}
}

// single returns a bundle of one run holding evs.
func single(evs []events.Event) *Bundle {
	return &Bundle{Metadata: testMeta(), Runs: []Run{{ID: "run-000", Pin: testPin(), Output: []byte("+lodash 4.17.21\n"), Events: evs}}}
}

// manyRuns returns a bundle of the given tapes as runs run-000, run-001, ...
func manyRuns(tapes ...[]events.Event) *Bundle {
	b := &Bundle{Metadata: testMeta()}
	for i, evs := range tapes {
		b.Runs = append(b.Runs, Run{ID: fmt.Sprintf("run-%03d", i), Pin: testPin(), Output: fmt.Appendf(nil, "output %d\n", i%2), Events: evs})
	}
	return b
}

// writeBoth writes b in both forms under a fresh temp dir and returns the
// directory and file paths.
func writeBoth(t testing.TB, b *Bundle) (dir, file string) {
	t.Helper()
	root := t.TempDir()
	dir, file = filepath.Join(root, "run.bundle"), filepath.Join(root, "run"+FileExt)
	require.NoError(t, Write(context.Background(), dir, b))
	require.NoError(t, WriteFile(context.Background(), file, b))
	return dir, file
}

// copyDir copies a directory bundle (regular files only).
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.bundle")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func writeFileBytes(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
