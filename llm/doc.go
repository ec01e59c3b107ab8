// Package llm is the model boundary of the codegenie pipeline: one small
// Adapter interface and two implementations, both talking HTTP through a
// caller-injected *http.Client so that a run can be recorded and replayed
// byte for byte behind a cassette transport.
//
//   - Anthropic speaks the Anthropic Messages API through the official SDK
//     (github.com/anthropics/anthropic-sdk-go/v2), non-streaming (Messages.New)
//     or streaming (Messages.NewStreaming, server-sent events accumulated with
//     Message.Accumulate).
//   - OpenAI speaks the OpenAI-compatible chat-completions API
//     (POST {BaseURL}/v1/chat/completions), the dialect of most local model
//     servers, through the official SDK (github.com/openai/openai-go/v3),
//     non-streaming (Chat.Completions.New) or streaming (NewStreaming,
//     chunks accumulated with ChatCompletionAccumulator, usage asked for
//     with stream_options.include_usage). The SDK's service is built from
//     explicit options only, so no OPENAI_* variable is read.
//
// # Determinism
//
// Every setting that can change a completion is fixed at construction and
// reported by Adapter.Settings, which the pipeline pins into the run's
// RunKey: provider, model, temperature (0 for OpenAI; the Anthropic API
// version takes none), max tokens, streaming and the wire API version. The
// adapters never retry (a retry would be an unrecorded second
// interaction), never read the environment (the SDK's
// environment defaults — ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
// ANTHROPIC_BASE_URL, profiles, federation — are switched off with
// option.WithoutEnvironmentDefaults, and its OpenTelemetry spans and trace
// propagation headers are switched off explicitly so their environment
// switches are not consulted either), and never call time.Now themselves.
// The API key, the base URL and the HTTP client are passed in by the caller.
//
// # Errors
//
// A response with an HTTP status >= 400 is an *APIError carrying the
// provider, the status and a bounded excerpt of the body (never the request,
// so the API key cannot leak into it). A completion without any text is
// ErrEmptyCompletion. Invalid configuration is ErrInvalidConfig, an empty
// request is ErrEmptyRequest. Transport errors (for example a cassette miss)
// are wrapped with %w, so errors.Is and errors.As reach them.
//
// # Non-goals
//
// Tools, images, multi-turn conversations, sampling parameters other than
// OpenAI's temperature 0 and automatic retries are deliberately out of
// scope: the pipeline sends one system prompt and one user prompt and
// reads back text.
package llm
