// Package review says what re-recording cassettes changed, in terms a
// reviewer of a pull request can judge: per cassette and per interaction,
// what was added, removed or changed; for a changed request, its
// field-level body diff; for a response, the final message a client
// reads (streams folded), a word-level diff of its text, the token usage
// and cost before and after, and a drift class; and the golden files that
// pin a changed cassette's digest, with the command that refreshes them.
//
// It reads cassettes through the public API of package cassettes
// (cassettes.ReadRecorded, cassettes.Digest) and works for any directory of
// cassettes, whoever recorded them. It is not a cassette diff tool for
// arbitrary HTTP (it folds the Anthropic Messages, OpenAI chat
// completions and Responses, Gemini, Bedrock Converse and InvokeModel of
// Claude, and Ollama chat, generate and embed APIs; other bodies are
// compared as bytes and JSON shapes), and it
// applies nothing: it is the review before cassettes.Apply. It imports no
// SDK: it reads the wire formats.
//
// # Use
//
//	stage, _ := cassettes.NewStage(dir)
//	// ... record the cassettes into stage ...
//	rev, err := review.Config{Goldens: []string{"testdata/golden"},
//		GoldenCommand: "go test ./pkg -run TestGolden -update"}.Compare(ctx, dir, stage)
//	rev.Markdown(os.Stdout) // paste into the pull request
//	rev.WriteJSON(f)        // for machines
//
// Both forms render the one Review value.
//
// # Pairing
//
// The interactions of the old and the new cassette are paired first by
// equal request keys (the cassettes package's matching key), in file order,
// as replay serves them; each new interaction left is then paired with
// the old one left of the same method and URL whose body differs in the
// fewest JSON fields (among the first 16 such; the first on a tie). A
// new interaction left unpaired is new, an old one removed.
//
// # Drift classes
//
// Each pair gets the first class that applies, in this order:
//
//	error      the status code, or the error type of the answer (see
//	           Folding), changed
//	schema     the response's media type changed, or a JSON field was
//	           added, removed or changed type in the request or the
//	           response body (streams: in the documents of frames of the
//	           same event); array elements share one path; null is
//	           compatible with every type; a tool call's input is not
//	           schema
//	content    anything else differs: request key, method, URL or body, or
//	           the response body (other text, ids, counts, chunking)
//	timing     the same request and response body, recorded with another
//	           duration or other frame arrivals (a re-record keeps noise
//	           out of the file, see package cassettes, Re-recording and
//	           timing, so this is a real change of pace: it moves the
//	           cassette's digest and what a gate's replays wait for)
//	unchanged  same request key, the same response body and timing
//
// and an unpaired interaction is new or removed. A cassette's class is its
// most severe interaction's, in the order unchanged, timing, content, new,
// removed, schema, error. Why lists the facts behind error, schema and
// timing.
//
// # Folding
//
// A response is folded as the SDKs accumulate it. The API is named by
// the request URL's path; the body is read in the frames replay serves
// (cassettes.Recorded.Frames, by the framing its Content-Type or, without
// one, its body shows) as JSON documents: server-sent-event frames' data,
// AWS event-stream messages' payloads (reading stops at the first bad
// message), NDJSON lines, the elements of Gemini's streamed JSON array
// (up to the first that is not JSON), or the body.
//
//   - Anthropic (a path ending in /messages): the message's or
//     message_start's model and usage, content blocks by index
//     (text_delta appended to text blocks, input_json_delta to tool_use
//     inputs), message_delta's stop_reason and cumulative usage, an error
//     body or event (error.type). Bedrock's InvokeModel of a Claude model
//     (a model id holding "anthropic.", model/M/invoke or
//     /invoke-with-response-stream) is folded so: a stream's chunk
//     messages carry the events base64-encoded in "bytes".
//   - OpenAI chat (/chat/completions): choice 0's message, or its deltas'
//     content and tool calls (by index, name and arguments appended),
//     finish_reason, the usage of the body or of the last chunk; errors
//     by error.type or error.code.
//   - OpenAI Responses (/responses): output items by output_index:
//     message output_text, function_call (and custom_tool_call) with its
//     call_id; in a stream, response.output_text.delta and
//     response.function_call_arguments.delta appended to their item,
//     output_item.done and the response of response.completed (or
//     .incomplete, .failed) replacing what the deltas built; the stop
//     reason is incomplete_details.reason, else the status; an error
//     body, the error event's code, or the response's error.
//   - Gemini (models/M:generateContent, :streamGenerateContent as a JSON
//     array or with alt=sse): candidate 0's text parts but thoughts, and
//     its functionCall parts, over every chunk; the last finishReason (or
//     promptFeedback.blockReason) and usageMetadata; the model is
//     modelVersion, else the URL's; errors by error.status.
//   - Bedrock Converse (model/M/converse, /converse-stream): content
//     blocks by index (text; toolUse with its input, streamed as
//     contentBlockStart and toolUse input deltas), stopReason, usage
//     (from metadata in a stream); the model is the URL's model id
//     (path-unescaped; of an ARN, its last part); errors by __type.
//   - Ollama (/api/chat and /api/generate, whole or NDJSON):
//     message.content (generate: response) appended, message.tool_calls
//     in order, done_reason, and prompt_eval_count and eval_count of the
//     chunk with done true; an error string is of type "error". Of
//     /api/embed, no text, and prompt_eval_count as the input.
//
// Whatever the API, an X-Amzn-Errortype header (with the body's message)
// or an event-stream exception or error message gives the error type and
// message, as the AWS SDKs report them.
// Usage counts each token once: OpenAI's and Gemini's cached prompt
// tokens are moved from input to cache reads, Gemini's thinking and
// tool-use prompt tokens count as output and input. Tool-call arguments
// are shown as canonical JSON when they parse.
// A stream recorded with frame offsets (the X-Codegenie-Frame-Offsets header) gets
// the arrival of its first and last frame. Timing is not part of the shape
// or of the body compared: a change of timing alone is the class timing.
// Every text the review keeps (URLs, request bodies, folded texts, tool
// calls, models, error types and messages) is masked as cassettes.Mask
// masks it, with Config.APIKey, before it is diffed or kept; texts and
// arguments are kept up to Config.MaxText bytes.
//
// # Word diff
//
// Texts are split into words and runs of white space, and aligned along a
// common subsequence of words as go-udiff's lcs package finds it (Myers'
// algorithm with a bounded search: linear in the words for texts that
// differ little, never a table of old times new words).
// Unchanged stretches longer than 480 bytes keep 160 bytes on each
// side. Markdown renders it as git's plain word diff: [-old-]{+new+}.
//
// # Price table
//
// The cost delta uses a price table, by default prices.json committed
// beside this package (DefaultPrices); Config.Prices overrides it
// (ReadPrices reads a file of the same format):
//
//	{"format": 2, "currency": "USD", "unit": "per million tokens",
//	 "as_of": "YYYY-MM-DD", "source": "...",
//	 "providers": [{"provider": "Anthropic",
//	   "page": "https://...", "read": "YYYY-MM-DD", "unconfirmed": "why",
//	   "models": [{"model": "claude-sonnet-4-5", "input": 3, "output": 15,
//	               "cache_read": 0.3, "cache_write": 3.75,
//	               "unconfirmed": "why"}, ...]}, ...]}
//
// Each provider block names the published pricing page its prices were
// checked against (an https address) and the day it was read; a block's
// or a model's "unconfirmed" (optional; one line that says why) marks
// prices that could not be checked there, and the review names the
// models it priced so ("Unconfirmed price for ..." in the summary, "at an
// unconfirmed price" on their cost lines, cost.unconfirmed in JSON).
// Format 1, {"format": 1, ..., "models": [...]}, the same models without
// blocks or provenance, is read too. The file is read strictly: one JSON
// object, no unknown fields, no repeated model (across blocks either).
// Prices are decimals with at most 6 decimals, read exactly into
// micro-units; absent prices are 0. A response's model (or else the
// request's "model") is priced by the entry of that name, else by the
// longest entry it extends with "-" and a suffix (a dated variant), else,
// for a Bedrock model id, as the id without its leading labels of
// lowercase letters and dashes (us.anthropic.claude-sonnet-4-5-... is
// priced as claude-sonnet-4-5 unless the table names the full id; Bedrock
// lists some regional profiles higher: name them to price them so).
// Costs are micro-units, rounded down per interaction; a model with no
// entry is listed as unpriced and counted as 0, but for Ollama's, which
// run locally and cost 0 unless the table names them. as_of says when
// the committed prices were last checked. The committed table was checked
// against stored copies of the providers' pages (the Anthropic page at
// platform.claude.com and its earlier docs.anthropic.com copy, OpenAI's
// per-model pages under developers.openai.com/api/docs/models); what no
// copy showed is marked unconfirmed.
//
// # Golden files
//
// Config.Goldens names directories of files that pin cassette digests.
// Every regular file under them (at most 10000 files; files over 4 MiB are
// skipped) that contains the old digest of a cassette whose digest changes
// is listed, with Config.GoldenCommand, the one command that refreshes
// them; the package never invents a command.
//
// # JSON form
//
// WriteJSON writes the Review value with encoding/json: format
// "codegenie-cassette-review/1", cassettes (sorted by file) each with
// file, old_digest ("" when new), new_digest, drift, interactions (old,
// new, old_line, new_line, method, url, change, drift, why, request_diff,
// before and after messages, text_diff spans {op, text, elided},
// cost), usage_before, usage_after and cost; then counts
// by class (every class, zero included), drifted, usage_before,
// usage_after, cost {before_micro, after_micro, delta_micro, unpriced,
// unconfirmed},
// prices (the table's source), currency, goldens {path, cassettes} and
// golden_command. Map keys are sorted, so equal reviews are equal bytes.
//
// # Markdown form
//
// Markdown leads with what a reviewer must look at first: one line per
// drifted interaction (at most 12, the rest counted), the most severe
// class first, saying what changed (the error or schema facts, the first
// changed request field, whether the answer's text, tool calls, stop
// reason or usage changed, or the timing). Then it writes a summary
// (classes, tokens, cost), a table of cassettes,
// the golden files and their command, then each interaction that is not
// unchanged: its facts, the request diff, the word diff of the answer and
// changed tool calls. It fits Config.MaxMarkdown bytes (60000 by default,
// under GitHub's comment limit): sections that do not fit are counted in a
// closing line pointing at the JSON form. Text from cassettes is written in
// code spans and fenced blocks whose fences are longer than any run of
// backticks inside, with control characters escaped.
package review
