// Package fallback is the fallback tier of codegenie: the pipeline that
// turns a security advisory and a repository snapshot into a canonical
// diff, by retrieving solved examples (rag), building a prompt (prompt),
// asking a model (llm) and checking that the answer applies (this
// package). Tier.Run is the entry point; every step writes one event to the
// run's tape (events).
//
// It is not a planner (the RecipeSelection is given), not a cassette
// layer (the adapter's *http.Client is injected; cassettes and the replay
// guard live elsewhere), and it never touches the file system: the repo is
// the in-memory RepoContext and the result is a diff, not an edited tree.
//
// # Run
//
// A run computes its RunKey before anything else, then emits, each event
// the causal child of the previous one:
//
//	run.started         path ("happy" or "retry"), run_key, run_key_digest, pin,
//	                    advisory_id, files, prior_attempts
//	retrieval.queried   query (rag.QueryText of ecosystem, package and advisory
//	                    text), query_digest, k, store_size, embedding_model_digest
//	retrieval.ranked    results: [{id, score}] best first, ties by id
//	band.classified     threshold_low, threshold_high, examples: [{id, score, band}],
//	                    top_band, shown (examples not rejected, which the prompt shows)
//	prompt.built        template_version, prompt_digest (PromptDigest), system_bytes,
//	                    user_bytes, examples, attempts, system, user (the full text)
//	llm.requested       settings (llm.Settings), request_digest (= prompt_digest)
//	llm.responded       text, text_digest, model, stop_reason, id, input_tokens,
//	                    output_tokens
//	transform.produced  diff, diff_digest, diff_bytes, files (changed paths, sorted)
//
// Payloads are canonical JSON (events.Canonical); digests are blake3-256 in
// lowercase hex. Inputs are validated right after run.started (thresholds,
// K, adapter, then the prompt builder's checks of advisory and files), so a
// bad input costs no retrieval and no model call. On any failure the run
// emits, instead of the remaining events,
//
//	transform.failed    step, kind, reason, path, error, excerpt
//
// where step is the event kind the failing step would have emitted (or
// "validate"), kind classifies the error ("invalid-input", "invalid-repo",
// "invalid-config", "unusable-completion", "llm-api" for an HTTP error
// status, "llm" for another failure of the model call, "panic", "canceled",
// "error"), reason is an UnusableCompletionError reason, and excerpt is at
// most MaxExcerpt bytes of the offending answer. Run then returns the
// Result with the events so far and a *RunError. Run never panics: a panic
// in a dependency becomes a *PanicError (ErrPanic).
//
// With prior attempts, the run takes the retry-bypass path: run.started
// records "retry" and the prompt carries the attempt summaries.
//
// # Pinning
//
// RunKey is the four-tuple (cassette_id, store_digest, repo_snapshot_sha,
// embedding_model_digest) plus config_digest, the digest of the Pin: the
// prompt template version, the canonical diff format version, the band
// thresholds, K, the prompt size limits, the model name and the adapter
// Settings, defaults resolved. The cassette_id comes from the adapter's
// transport when it implements CassetteIdentifier, else it is empty.
// RunKey.Digest is blake3-256 of the canonical JSON object with keys
// cassette_id, config_digest, embedding_model_digest, repo_snapshot_sha and
// store_digest; RunKey.String is its hex. The prompt inputs (advisory,
// recipe, prior attempts) are not in the key: a key names the environment
// a run is pinned to, not the question asked, so goldens are keyed by
// scenario, path and RunKey together.
//
// repo_snapshot_sha is the git tree hash of the files (SHA-1 object format,
// every file mode 100644, directories as nested trees, entries in git's
// order where a directory sorts as if its name ended in "/"): what
// `git write-tree` prints after `git add` of exactly those files.
//
// # Canonical diff
//
// The model's answer is parsed with prompt.ParseAnswer, its diff with
// github.com/bluekeyes/go-gitdiff and applied to the snapshot with
// gitdiff.Apply (hunks must match at the line numbers they give). Only
// in-place edits of text files in the snapshot are accepted. Then the diff
// is regenerated from the old and new contents with
// github.com/aymanbagabas/go-udiff, so its bytes depend only on the change:
//
//   - files in byte order of their paths, unchanged files omitted;
//   - per file: "diff --git a/P b/P", "--- a/P", "+++ b/P", then the hunks;
//   - ContextLines (3) lines of context, hunks merged when their contexts
//     touch, "@@ -l,n +l,n @@" headers with ",n" omitted when n is 1;
//   - "\ No newline at end of file" after a last line without newline;
//   - a path with a double quote, backslash or control character is
//     quoted as git quotes it; a path with a space gets a tab after it on
//     the ---/+++ lines, as git writes it.
//
// `git apply` accepts the result. TransformVersion names this format.
package fallback
