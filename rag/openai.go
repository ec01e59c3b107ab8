package rag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/guard"

	"github.com/codegenie/codegenie/events"
)

// OpenAIEmbedderVersion names the request/response handling of
// OpenAIEmbedder and goes into its Digest.
const OpenAIEmbedderVersion = "codegenie/rag/openai-embedder/v1"

// MaxInputsPerRequest is the most texts OpenAIEmbedder sends in one request;
// longer batches are split into consecutive requests in order.
const MaxInputsPerRequest = 2048

// maxResponseBytes bounds the response body read from the server.
const maxResponseBytes = 256 << 20

// maxErrorBody bounds the response-body excerpt quoted in errors.
const maxErrorBody = 512

// ErrEmbeddingAPI reports a failed or malformed answer from an embeddings
// endpoint. *APIError carries the details.
var ErrEmbeddingAPI = errors.New("embeddings endpoint failed")

// APIError describes a failed call to an embeddings endpoint: the URL, the
// HTTP status (0 when the request never got an answer) and a bounded excerpt
// of the response body. It never contains the API key. It unwraps to
// ErrEmbeddingAPI and, when there is one, the underlying error.
type APIError struct {
	URL        string
	StatusCode int
	Status     string
	Body       string // at most 512 bytes of the response body
	Err        error  // transport or decoding error, if any
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rag: POST %s: %v", e.URL, ErrEmbeddingAPI)
	if e.Status != "" {
		fmt.Fprintf(&b, ": status %s", e.Status)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Body != "" {
		fmt.Fprintf(&b, ": body %q", e.Body)
	}
	return b.String()
}

// Unwrap returns ErrEmbeddingAPI and the underlying error.
func (e *APIError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrEmbeddingAPI}
	}
	return []error{ErrEmbeddingAPI, e.Err}
}

// OpenAIEmbedder calls an OpenAI-compatible embeddings endpoint:
// POST {BaseURL}/v1/embeddings with
// {"model":M,"input":[...],"encoding_format":"float"[,"dimensions":D]}.
// All I/O goes through Client, so tests and the determinism gate run it
// behind a cassette transport or a loopback server. It is safe for
// concurrent use if Client is.
type OpenAIEmbedder struct {
	// Client performs the requests. It must not be nil: inject one (a
	// cassette-backed client in tests); the embedder never falls back to
	// http.DefaultClient.
	Client *http.Client
	// BaseURL is the scheme and host (and optional path prefix) of the
	// server, without "/v1", e.g. "https://api.openai.com". A trailing
	// slash is ignored.
	BaseURL string
	// Model is the embedding model name sent with every request. Required.
	Model string
	// APIKey, when not empty, is sent as "Authorization: Bearer <APIKey>".
	// It never appears in errors and is not part of the Digest.
	APIKey string
	// Dims, when positive, is sent as "dimensions" and every returned vector
	// must have that length. When 0 the model's native length is accepted
	// (all vectors of one call must still agree) and Dimensions() reports 0.
	// (The field cannot be called Dimensions: that is the Embedder method.)
	Dims int
}

// Digest returns the embedding_model_digest: blake3-256 of the canonical
// JSON {"dimensions":D,"kind":"openai","model":M,"version":V}.
//
// The base URL and API key are deliberately left out: the same model
// recorded against the live API and replayed through a cassette or a
// loopback server must pin to the same digest, and the cassette_id already
// pins the exact bytes the server answered.
func (o *OpenAIEmbedder) Digest() events.Digest {
	payload, err := events.Canonical(struct {
		Kind       string `json:"kind"`
		Version    string `json:"version"`
		Model      string `json:"model"`
		Dimensions int    `json:"dimensions"`
	}{"openai", OpenAIEmbedderVersion, o.Model, o.Dims})
	if err != nil { // cannot happen: strings and an int always encode
		panic("rag: openai embedder digest: " + err.Error())
	}
	return events.Sum(payload)
}

// Dimensions returns the configured vector length (0: the model's own).
func (o *OpenAIEmbedder) Dimensions() int { return o.Dims }

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// opEmbed is the operation a live embedding call is refused as in replay
// mode (guard.ReplayModeError.Op).
const opEmbed = "live embedding call"

// Embed returns one vector per text, in order. Errors from the server are
// *APIError values naming the URL, the status and an excerpt of the body.
//
// In replay mode (guard.WithReplay) a live call is refused with a
// *guard.ReplayModeError (Op "live embedding call") before any request is made,
// unless the client's transport replays a cassette (it has a CassetteID
// method, as cassettes' transports do).
func (o *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if o.Client == nil {
		return nil, fmt.Errorf("rag: openai embedder: %w: Client is nil; inject an *http.Client (a cassette-backed one in tests)", ErrBadConfig)
	}
	if _, replays := o.Client.Transport.(interface{ CassetteID() string }); !replays {
		if err := guard.AssertReplaySafe(ctx, opEmbed); err != nil {
			return nil, fmt.Errorf("rag: openai embedder: %d text(s) for model %s: %w; serve embeddings from a cassette or use a deterministic local embedder", len(texts), o.Model, err)
		}
	}
	if o.Model == "" {
		return nil, fmt.Errorf("rag: openai embedder: %w: Model is empty; pin the embedding model name", ErrBadConfig)
	}
	if o.Dims < 0 {
		return nil, fmt.Errorf("rag: openai embedder: Dims = %d: %w: use 0 or a positive length", o.Dims, ErrBadConfig)
	}
	out := make([][]float64, 0, len(texts))
	want := o.Dims
	for start := 0; start < len(texts); start += MaxInputsPerRequest {
		end := min(start+MaxInputsPerRequest, len(texts))
		vs, err := o.call(ctx, texts[start:end], want)
		if err != nil {
			return nil, err
		}
		if want == 0 && len(vs) > 0 {
			want = len(vs[0])
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (o *OpenAIEmbedder) call(ctx context.Context, texts []string, want int) ([][]float64, error) {
	url := strings.TrimRight(o.BaseURL, "/") + "/v1/embeddings"
	body, err := json.Marshal(openAIRequest{Model: o.Model, Input: texts, EncodingFormat: "float", Dimensions: o.Dims})
	if err != nil {
		return nil, &APIError{URL: url, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &APIError{URL: url, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, &APIError{URL: url, Err: redact(err, o.APIKey)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, &APIError{URL: url, StatusCode: resp.StatusCode, Status: resp.Status, Err: fmt.Errorf("reading body: %w", err)}
	}
	if len(raw) > maxResponseBytes {
		return nil, &APIError{URL: url, StatusCode: resp.StatusCode, Status: resp.Status,
			Err: fmt.Errorf("response body exceeds %d bytes; send fewer inputs per call", maxResponseBytes)}
	}
	fail := func(err error) error {
		return &APIError{URL: url, StatusCode: resp.StatusCode, Status: resp.Status,
			Body: redactString(excerpt(string(raw), maxErrorBody), o.APIKey), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fail(nil)
	}
	var r openAIResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fail(fmt.Errorf("decoding response: %w", err))
	}
	if len(r.Data) != len(texts) {
		return nil, fail(fmt.Errorf("got %d embeddings for %d inputs", len(r.Data), len(texts)))
	}
	out := make([][]float64, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fail(fmt.Errorf("embedding index %d is out of range or repeated", d.Index))
		}
		if want > 0 && len(d.Embedding) != want {
			return nil, fail(fmt.Errorf("embedding %d has %d dimensions, want %d", d.Index, len(d.Embedding), want))
		}
		if len(d.Embedding) == 0 {
			return nil, fail(fmt.Errorf("embedding %d is empty", d.Index))
		}
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fail(fmt.Errorf("embedding %d component %d is not finite", d.Index, j))
			}
		}
		if want == 0 {
			want = len(d.Embedding)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// redact removes key from an error's text (a transport error can quote a
// request); it keeps the chain when there is nothing to remove.
func redact(err error, key string) error {
	if key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return errors.New(redactString(err.Error(), key))
}

func redactString(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}
