package fakellm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
)

// Mode selects how the server answers. The zero value, Normal, answers the
// fix; the others are failure modes for tests. A marker in the advisory ID
// overrides Config.Mode for that request (see the package doc).
type Mode int

// The modes. See the package doc for the exact answer of each.
const (
	// Normal answers FormatAnswer(diff) where diff bumps the vulnerable
	// package to the fixed version in the manifest that pins it.
	Normal Mode = iota
	// Garbage answers a diff block whose content is not a unified diff.
	Garbage
	// NoDiff answers prose without any diff block.
	NoDiff
	// NonApplying answers a well-formed diff whose removed line does not
	// match the repository file.
	NonApplying
	// HTTPError answers with status Config.Status (500 when zero) and the
	// provider's error body.
	HTTPError
	// Empty answers a successful completion with no text.
	Empty
	// Truncated answers a streaming request with an event stream cut off
	// before message_stop (a JSON request gets the Normal answer).
	Truncated
	// FailFirst answers like Garbage when the prompt has no prior attempts
	// and like Normal when it has some: the retry path recovers.
	FailFirst
)

var modeNames = [...]string{"normal", "garbage", "nodiff", "nonapplying", "httperror", "empty", "truncated", "failfirst"}

// String returns the mode's lower-case name.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Config configures a Server. The zero value is usable: Normal answers, no
// API key check, 16-byte stream chunks, 64-dimensional embeddings.
type Config struct {
	// Mode is the default answer mode; advisory-ID markers override it.
	Mode Mode
	// Status is the HTTP status HTTPError answers with; 0 means 500.
	Status int
	// APIKey, when non-empty, is required: Anthropic requests must carry it
	// in x-api-key or as "Authorization: Bearer <key>" (anthropic-sdk-go
	// v2 sends the latter), OpenAI requests as "Authorization: Bearer <key>".
	// Others get 401 with the provider's authentication error body.
	APIKey string
	// ChunkSize is the number of bytes of text per content_block_delta
	// event of a stream; 0 means 16. Chunks never split a UTF-8 sequence.
	ChunkSize int
	// EmbeddingDims is the length of the vectors /v1/embeddings returns
	// when the request does not ask for "dimensions"; 0 means 64.
	EmbeddingDims int
}

// Server is the fake LLM. It is an http.Handler and safe for concurrent
// use; its answers depend only on its Config and the request.
type Server struct {
	cfg   Config
	calls atomic.Int64
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.Status == 0 {
		cfg.Status = http.StatusInternalServerError
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = 16
	}
	if cfg.EmbeddingDims <= 0 {
		cfg.EmbeddingDims = 64
	}
	return &Server{cfg: cfg}
}

// Calls reports how many requests the server has received.
func (s *Server) Calls() int64 { return s.calls.Load() }

// ServeHTTP answers POST /v1/messages (Anthropic Messages, JSON or SSE),
// POST /v1/chat/completions, /v1/embeddings and /v1/responses (OpenAI),
// POST /api/chat, /api/generate (Ollama, NDJSON or JSON) and /api/embed,
// .../models/{model}:generateContent and :streamGenerateContent (Gemini)
// and /model/{modelId}/converse, /converse-stream, /invoke and
// /invoke-with-response-stream (Bedrock), under any
// path prefix. Any other path is 404 and any other method 405, with a JSON error
// body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/v1/messages"):
		s.serveMessages(w, r)
	case strings.HasSuffix(p, "/v1/chat/completions"):
		s.serveChat(w, r)
	case strings.HasSuffix(p, "/v1/embeddings"):
		s.serveEmbeddings(w, r)
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		s.serveGemini(w, r)
	case strings.Contains(p, "/model/") && (strings.HasSuffix(p, "/converse") || strings.HasSuffix(p, "/converse-stream")):
		s.serveBedrock(w, r)
	case strings.Contains(p, "/model/") && (strings.HasSuffix(p, "/invoke") || strings.HasSuffix(p, "/invoke-with-response-stream")):
		s.serveBedrockInvoke(w, r)
	case strings.HasSuffix(p, "/v1/responses"):
		s.serveResponses(w, r)
	case strings.HasSuffix(p, "/api/chat"):
		s.serveOllamaChat(w, r)
	case strings.HasSuffix(p, "/api/generate"):
		s.serveOllamaGenerate(w, r)
	case strings.HasSuffix(p, "/api/embed"):
		s.serveOllamaEmbed(w, r)
	default:
		writeJSON(w, http.StatusNotFound, openAIError(http.StatusNotFound, "fakellm: no route for "+r.URL.Path+"; use /v1/messages, /v1/chat/completions, /v1/embeddings, /v1/responses, /api/chat, /api/generate, /api/embed, Gemini's :generateContent or Bedrock's /converse and /invoke"))
	}
}

// Transport returns an http.RoundTripper that hands every request to the
// server in-process, whatever its host: no sockets, no goroutines, so it
// works inside testing/synctest bubbles. It is safe for concurrent use.
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Server }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	// Read the body up front so the handler sees a complete request, as it
	// would from a socket.
	r := req.Clone(req.Context())
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
	} else {
		r.Body = http.NoBody
	}
	r.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.s.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = req
	return res, nil
}
