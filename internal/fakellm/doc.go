// Package fakellm is a deterministic, local stand-in for an LLM API, so that
// tests drive the real Anthropic SDK and the OpenAI-compatible adapter over
// real HTTP without a network or a key.
//
// It is not a model and not a recorder: it derives one fixed answer from the
// prompt, and recording real interactions is the cassettes package's job.
//
// # Use
//
// A Server is an http.Handler. Serve it on loopback with NewHTTPTest (closed
// by t.Cleanup), or call it in-process through Server.Transport, an
// http.RoundTripper that routes every request to the server whatever the
// host, with no sockets and no goroutines — the form to use inside
// testing/synctest bubbles.
//
// # Wire behaviour
//
// Routes match on the path suffix, so a BaseURL with a path prefix works.
//
// POST /v1/messages is the Anthropic Messages API. The request must carry
// "model", "max_tokens" and a non-empty "messages" whose last entry has role
// "user"; "system" and message "content" may be strings or arrays of text
// blocks. The answer is a message object
//
//	{"id":"msg_fake_<hex>","type":"message","role":"assistant","model":<request model>,
//	 "content":[{"type":"text","text":<answer>}],"stop_reason":"end_turn",
//	 "stop_sequence":null,"usage":{"input_tokens":N,"output_tokens":M}}
//
// or, with "stream": true, a text/event-stream of the events message_start
// (content empty, stop_reason null, output_tokens 1), content_block_start
// (index 0, empty text block), ping, content_block_delta (text_delta, the
// answer in Config.ChunkSize-byte pieces that never split a UTF-8
// sequence), content_block_stop, message_delta (stop_reason, stop_sequence
// null, usage.output_tokens M) and message_stop, each as "event: <type>" and
// "data: <json>" lines followed by a blank line. An empty answer has no
// content block events. Errors are {"type":"error","error":{"type":<the API's
// type for the status, e.g. api_error, overloaded_error>,"message":...}}.
// With Config.APIKey set, x-api-key must equal it, or Authorization be
// "Bearer <key>" (else 401).
//
// POST /v1/chat/completions is the OpenAI chat-completions API:
// {"id":"chatcmpl-fake-<hex>","object":"chat.completion",
// "created":0,"model":<request model>,"choices":[{"index":0,"message":
// {"role":"assistant","content":<answer>},"finish_reason":"stop"}],
// "usage":{"prompt_tokens":N,"completion_tokens":M,"total_tokens":N+M}},
// or, with "stream": true, a text/event-stream of "data: <json>" chunks
// ("object":"chat.completion.chunk", the same id, created and model): the
// assistant role with empty content, the answer in Config.ChunkSize-byte
// pieces as delta content, an empty delta with the finish_reason, a chunk
// with empty choices and the usage when stream_options.include_usage is
// true, then "data: [DONE]" (Truncated stops after the pieces).
// The last "user" message is the prompt; "system" messages are the system
// prompt. Tool calls: with "tool" messages after the last user message
// (each answering a call an assistant message made, found by
// tool_call_id; one answering none is 400) the answer is "fakellm: <name>
// returned <content>" for each, joined by "; "; else, when "tools" offers
// a function (and tool_choice is not "none"), the message calls the first
// one: content null, tool_calls [{"id":"call_fake_<hex>","type":
// "function","function":{"name","arguments":<a JSON string of the object
// the Responses API's call has>}}], finish_reason "tool_calls"; streamed
// as a delta naming the call with empty arguments, then the arguments in
// Config.ChunkSize-byte pieces ({"index":0,"function":{"arguments"}}).
// Errors are {"error":{"message","type","param","code"}}. With
// Config.APIKey set, Authorization must be "Bearer <key>".
//
// POST /v1/embeddings is the OpenAI embeddings API: "input" is a string or
// an array of strings, "dimensions" (optional) the vector length
// (Config.EmbeddingDims, 64, when absent, at most 4096). Each vector is
// Embed(text, dims). Only Config.Mode HTTPError affects this endpoint.
//
// POST .../models/{model}:generateContent is the Gemini API: the prompt is
// the text of the last of "contents" (and the JSON of its
// functionResponse parts), "systemInstruction" the system prompt,
// "generationConfig.maxOutputTokens" the budget. The answer is
// {"candidates":[{"content":{"role":"model","parts":[{"text":<answer>}]},
// "finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount",
// "candidatesTokenCount","totalTokenCount"},"modelVersion":<model>,
// "responseId":<hex>} (finishReason "MAX_TOKENS" when cut).
// :streamGenerateContent sends one such response per Config.ChunkSize
// piece, the finish reason on the last only (none under Truncated): with
// ?alt=sse as server-sent events, "data: <json>" and CRLF CRLF, as the API
// and google.golang.org/genai use them; without, as one JSON array.
// Contents without parts, or a part with no data member (an empty text
// part, which genai leaves out), are refused with the API's 400
// INVALID_ARGUMENT message. Errors are {"error":{"code","message",
// "status"}} with the google.rpc status name. With Config.APIKey set,
// x-goog-api-key or ?key= must equal it (else the API's 400
// API_KEY_INVALID).
//
// POST .../model/{modelId}/converse is Amazon Bedrock's Converse API: the
// prompt is the text of the last message's text blocks (and the JSON of its
// toolResult blocks), "system" the system prompt,
// "inferenceConfig.maxTokens" the budget. The answer is
// {"output":{"message":{"role":"assistant","content":[{"text":<answer>}]}},
// "stopReason":"end_turn" (or "max_tokens"),"usage":{"inputTokens",
// "outputTokens","totalTokens"},"metrics":{"latencyMs":0}}.
// /converse-stream answers application/vnd.amazon.eventstream: binary
// messages (big-endian total and headers lengths, the CRC-32 of those 8
// bytes, string headers ":event-type", ":content-type" application/json
// and ":message-type" event, the JSON payload, the CRC-32 of all before
// it) of the events messageStart, contentBlockDelta (the answer in
// Config.ChunkSize pieces), contentBlockStop, messageStop (stopReason) and
// metadata (usage, metrics); Truncated stops after the deltas. A
// conversation that does not start with a user message, or a blank text
// block, is refused with Bedrock's ValidationException message. Errors
// name the exception in X-Amzn-Errortype (ValidationException,
// ThrottlingException, ModelErrorException, ... by status) with
// {"message": ...}. With Config.APIKey set, the SigV4 Authorization must
// name it as the access key id (or be "Bearer <key>"), else 403
// UnrecognizedClientException. Responses carry X-Amzn-Requestid.
//
// Tool calls (Gemini and Bedrock): when the request declares functions
// (Gemini "tools[].functionDeclarations", Bedrock
// "toolConfig.tools[].toolSpec") and the prompt contains the name of one,
// the answer calls the first such, with the required properties of its
// JSON schema as arguments: a string set to the prompt, an integer or a
// number to the prompt's length in bytes, a boolean to true, an array to
// [], an object to {}. Gemini answers a functionCall part (one stream
// chunk) with finishReason "STOP"; Bedrock a toolUse block
// ("toolUseId":"tooluse_<hex>"; streamed as contentBlockStart with the
// name and id, then the input's JSON in pieces) with stopReason
// "tool_use". Their IDs digest "gemini" or "bedrock" where the others
// digest the path, so a JSON answer and its stream share them.
//
// POST /v1/responses is the OpenAI Responses API. "input" is a string (one
// user message) or an array of items: messages (a role and content, a
// string or input_text parts), function_call and function_call_output
// items; "instructions" is the system prompt. The answer is a response
// object ("object":"response", "created_at":0, id "resp_fake_<hex>") with
// one output item: with function_call_output items in the input, a
// message whose output_text is "fakellm: <name> returned <output>" for
// each, joined by "; "; else, when "tools" holds a function tool (and
// tool_choice is not "none"), a function_call of the first one (id
// "fc_fake_<hex>", call_id "call_fake_<hex>") whose arguments object has
// one value per property of its parameters schema, in name order: the
// last user message for a string, its word count for an integer or
// number, true for a boolean, null otherwise; else a message with the
// answer the modes below give. With "stream": true it is a
// text/event-stream of typed events, each "event: <type>" and
// "data: <json>" with "type" and "sequence_number" counting from 0:
// response.created, response.in_progress, response.output_item.added,
// then for a message response.content_part.added, output_text.delta
// pieces, output_text.done and content_part.done, or for a function call
// function_call_arguments.delta pieces and function_call_arguments.done;
// then response.output_item.done and response.completed (or
// response.incomplete when max_output_tokens cut the text), and no
// "[DONE]". Errors have the chat-completions shape with "param" and
// "code": a max_output_tokens below 16 is 400 integer_below_min_value,
// as the API says it.
//
// POST /api/chat is Ollama's chat API: "model" (else 400 "model is
// required"), "messages" (system, user, assistant and tool roles; a tool
// message names its tool in "tool_name") and "tools". Like Ollama it
// streams unless "stream" is false: application/x-ndjson, one JSON object
// a line, {"model","created_at":"1970-01-01T00:00:00Z","message":
// {"role":"assistant","content":<piece>},"done":false}, then a last line
// with "done":true, "done_reason":"stop", "prompt_eval_count" and
// "eval_count"; with "stream": false that last object carries the whole
// message. Tool messages are answered "fakellm: <tool_name> returned
// <content>" (joined by "; "); else "tools" gets a call of the first tool
// in "message.tool_calls" ({"id":"call_fake_<hex>","function":{"index":0,
// "name","arguments":<object as for the Responses API>}}; its
// eval_count counts the name and the arguments). Errors are
// Ollama's {"error":"<message>"}. Its OpenAI-compatible endpoint is
// /v1/chat/completions above.
//
// POST /api/generate is Ollama's generate API: "model" (else 400),
// "prompt" and "system"; streamed like /api/chat unless "stream" is false,
// the text in "response" ({"model","created_at","response":<piece>,
// "done":false}, then the line with "done":true, "done_reason":"stop",
// "prompt_eval_count" and "eval_count"); an empty prompt answers only
// {"model","created_at","response":"","done":true,"done_reason":"load"},
// as Ollama does when it loads a model. POST /api/embed is Ollama's embed
// API: "input" a string or an array of strings (none: no vectors),
// "dimensions" (Config.EmbeddingDims when absent, at most 4096); the
// answer is {"model","embeddings":[Embed(text, dims), ...],
// "prompt_eval_count"}.
//
// POST .../model/{modelId}/invoke and /invoke-with-response-stream are
// Bedrock's InvokeModel for an Anthropic model (an id with "anthropic.",
// else ValidationException): the body is a Messages request that names
// "anthropic_version" and neither "model" nor "stream" (else Bedrock's
// "Malformed input request" ValidationException), answered as
// /v1/messages answers it (IDs digest "bedrock-invoke") with
// X-Amzn-Bedrock-Input-Token-Count and -Output-Token-Count headers; the
// stream is application/vnd.amazon.eventstream, one "chunk" event per
// event of the Messages stream (no ping), its payload {"bytes": the
// base64 of the event's JSON}, message_stop carrying
// "amazon-bedrock-invocationMetrics" (inputTokenCount, outputTokenCount,
// invocationLatency 0, firstByteLatency 0).
//
// In the Responses and Ollama endpoints a FAKELLM-HTTP-nnn marker anywhere
// in the last user message answers status nnn with the endpoint's error
// body, also for a prompt promptparse cannot read.
//
// Determinism: IDs are the first 12 bytes (hex) of a SHA-256 over the path,
// model, max_tokens, system prompt and user prompt (for the Responses API
// the whole input and the tools; for Ollama every message and the tool's
// name) — not the stream flag, so the JSON and streamed answers to one
// request describe the same message.
// Token counts are ceil(bytes/4) of the system plus user prompt (input) and
// of the answer (output). An answer longer than max_tokens*4 bytes is cut at
// a rune boundary with stop_reason "max_tokens" (OpenAI: finish_reason
// "length"). A Request-Id header "req_fake_<hex>" carries the same digest.
//
// # Answers
//
// The user prompt is parsed with internal/promptparse, which accepts exactly
// the User text prompt.Builder writes. A prompt it cannot parse is echoed:
// the answer is "fakellm echo: " followed by the prompt (Config.Mode
// HTTPError, Empty and Truncated still apply; the other modes need a
// repository and are ignored for such a prompt). Otherwise the mode
// decides — Config.Mode, unless the advisory ID contains a marker
// (case-insensitive), which wins:
//
//	mode         marker               answer
//	Normal       -                    prompt.FormatAnswer(diff)
//	Garbage      FAKELLM-GARBAGE      a diff block holding "this is not a diff <hex>"
//	NoDiff       FAKELLM-NODIFF       prose, no diff block
//	NonApplying  FAKELLM-NONAPPLYING  a well-formed diff whose first removed line is
//	                                  prefixed "fakellm-stale ", so it does not apply
//	HTTPError    FAKELLM-HTTP-<nnn>   status nnn (Config.Status, default 500, for the
//	                                  mode or a marker without digits) and an error body
//	Empty        FAKELLM-EMPTY        a successful answer with no text
//	Truncated    FAKELLM-TRUNCATED    streams stop after the text deltas (no
//	                                  content_block_stop, message_delta, message_stop);
//	                                  JSON answers are Normal
//	FailFirst    FAKELLM-FAILFIRST    Garbage without prior attempts in the prompt,
//	                                  Normal with them (the retry path recovers)
//
// The Normal diff bumps the advisory's Package to its FixedVersion in every
// manifest among the prompt's files that pins it, in path order, and is
// rendered with github.com/aymanbagabas/go-udiff as a git-style unified diff
// ("diff --git a/<p> b/<p>", "--- a/<p>", "+++ b/<p>", three lines of
// context). Manifests by ecosystem (an unknown ecosystem tries them all):
//
//   - npm: package.json; `"<pkg>": "<spec>"` where spec is a version with an
//     optional ^, ~, >= or = prefix (kept) or v prefix (dropped); ranges,
//     tags and URLs are left alone.
//   - Go: go.mod; the module's version in a `require` line or block, with a
//     v prefix, keeping "// indirect" and other comments.
//   - PyPI: requirements*.txt; `name==version` pins, the name compared after
//     PEP 503 normalisation, keeping extras, markers, hashes and comments.
//
// When no manifest pins the package below the fixed version, the answer is
// the NoDiff prose with the reason appended. Line endings are preserved.
package fakellm
