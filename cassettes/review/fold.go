package review

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
)

// The APIs a response is folded for, named by the request URL's path.
const (
	apiAnthropic = "anthropic-messages" // POST .../v1/messages
	apiOpenAI    = "openai-chat"        // POST .../chat/completions
	apiResponses = "openai-responses"   // POST .../responses
	apiGemini    = "gemini"             // POST .../models/M:generateContent or :streamGenerateContent
	apiBedrock   = "bedrock-converse"   // POST .../model/M/converse or /converse-stream
	apiOllama    = "ollama-chat"        // POST .../api/chat
	apiGenerate  = "ollama-generate"    // POST .../api/generate
	apiEmbed     = "ollama-embed"       // POST .../api/embed
)

// isOllama reports whether api is one of Ollama's, whose models run
// locally.
func isOllama(api string) bool { return api == apiOllama || api == apiGenerate || api == apiEmbed }

// Message is a response folded into what a reviewer reads: the final
// message a client accumulates from a JSON body or from every frame of a
// stream.
type Message struct {
	// API is the API spoken: "anthropic-messages", "openai-chat",
	// "openai-responses", "gemini", "bedrock-converse", "ollama-chat",
	// "ollama-generate" or "ollama-embed"; "" for a request of none.
	API string `json:"api,omitempty"`
	// Status is the HTTP status.
	Status int `json:"status"`
	// Streamed says the body was a stream (server-sent events, AWS event
	// stream, NDJSON, or Gemini's JSON array; see
	// cassettes.Recorded.Framing) of Frames frames: every event, the
	// others' frames that hold a document.
	Streamed bool `json:"streamed,omitempty"`
	Frames   int  `json:"frames,omitempty"`
	// Timing is when the first and the last frame arrived, for a stream
	// recorded with frame offsets (cassettes.Recorded.FrameOffsets).
	Timing *StreamTiming `json:"timing,omitempty"`
	Model  string        `json:"model,omitempty"`
	// Text is the concatenated text of the message (Anthropic text blocks,
	// OpenAI choice 0's content, ...; see Folding in the package
	// documentation), cut to Config.MaxText bytes when TextCut is set.
	Text    string `json:"text"`
	TextCut bool   `json:"text_cut,omitempty"`
	// ToolCalls are the tool calls in order, arguments as canonical JSON
	// when they parse.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	StopReason string     `json:"stop_reason,omitempty"`
	Usage      Usage      `json:"usage"`
	// ErrorType and ErrorMessage come from an error body or an error
	// event of a stream.
	ErrorType    string `json:"error_type,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// StreamTiming is when frames of a stream arrived, in milliseconds since
// the request was sent.
type StreamTiming struct {
	FirstFrameMS int64 `json:"first_frame_ms"`
	LastFrameMS  int64 `json:"last_frame_ms"`
}

// ToolCall is one tool call of a message.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token usage a response reports. Input excludes cache
// reads and writes (OpenAI's cached prompt tokens are moved to
// CacheRead), so each count is priced once.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

func (u Usage) add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// apiOf names the API of a request URL.
func apiOf(url string) string {
	path, _, _ := strings.Cut(url, "?")
	switch {
	case strings.HasSuffix(path, "/messages"):
		return apiAnthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return apiOpenAI
	case strings.HasSuffix(path, "/responses"):
		return apiResponses
	case strings.Contains(path, "/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		return apiGemini
	case strings.Contains(path, "/model/") && (strings.HasSuffix(path, "/converse") || strings.HasSuffix(path, "/converse-stream")):
		return apiBedrock
	case strings.Contains(path, "/model/") && (strings.HasSuffix(path, "/invoke") || strings.HasSuffix(path, "/invoke-with-response-stream")) &&
		strings.Contains(bedrockModel(path), "anthropic."):
		return apiAnthropic // Bedrock's InvokeModel of a Claude model speaks Anthropic Messages
	case strings.HasSuffix(path, "/api/chat"):
		return apiOllama
	case strings.HasSuffix(path, "/api/generate"):
		return apiGenerate
	case strings.HasSuffix(path, "/api/embed"):
		return apiEmbed
	}
	return ""
}

// An accumulator folds the documents of one response into a message, as
// the SDK of its API does.
type accumulator interface {
	add(d doc)
	finish()
}

// folder accumulates a message from JSON documents: one body, or the
// data of each frame of a stream.
type folder struct {
	m      *Message
	blocks map[int]*block       // Anthropic content blocks by index
	calls  map[int]*chunkedCall // OpenAI tool calls by index
	text   strings.Builder
}

// chunkedCall is a tool call streamed in chunks, each appended (in a
// builder: appending to a string would copy it whole each time).
type chunkedCall struct {
	id         string
	name, args strings.Builder
}

type block struct {
	typ   string
	text  strings.Builder
	call  ToolCall
	input strings.Builder // partial_json deltas
	whole json.RawMessage // a complete input
}

// fold folds r's response.
func fold(r cassettes.Recorded) Message {
	m := Message{API: apiOf(r.URL), Status: r.Status}
	var acc accumulator
	switch m.API {
	case apiResponses:
		acc = &responsesFolder{m: &m, items: map[int]*respItem{}}
	case apiGemini:
		acc = &geminiFolder{m: &m}
	case apiBedrock:
		acc = &bedrockFolder{m: &m, blocks: map[int]*bedrockBlock{}}
	case apiOllama, apiGenerate, apiEmbed:
		acc = &ollamaFolder{m: &m}
	default:
		acc = &folder{m: &m, blocks: map[int]*block{}, calls: map[int]*chunkedCall{}}
	}
	docs, streamed, frames := documents(r, m.API)
	for _, d := range docs {
		if d.exception {
			awsError(&m, r, &d)
			continue
		}
		acc.add(d)
	}
	m.Streamed, m.Frames = streamed, frames
	if offs := r.FrameOffsets(); len(offs) > 0 {
		m.Timing = &StreamTiming{offs[0].Milliseconds(), offs[len(offs)-1].Milliseconds()}
	}
	acc.finish()
	awsError(&m, r, nil)
	m.ToolCalls = canonicalCalls(m.ToolCalls)
	if m.Model == "" {
		m.Model = urlModel(m.API, r.URL)
	}
	return m
}

// canonicalCalls writes each call's arguments as canonical JSON when they
// parse, "{}" when empty.
func canonicalCalls(calls []ToolCall) []ToolCall {
	for i, c := range calls {
		if c.Arguments == "" {
			calls[i].Arguments = "{}"
		} else if canon, err := events.Canonical(json.RawMessage(c.Arguments)); err == nil {
			calls[i].Arguments = string(canon)
		}
	}
	return calls
}

// urlModel is the model a request URL names: Gemini's models/M:method,
// Bedrock's model/M/converse or /invoke (see bedrockModel), or "".
func urlModel(api, rawURL string) string {
	path, _, _ := strings.Cut(rawURL, "?")
	switch {
	case api == apiGemini:
		_, after, _ := strings.Cut(path, "/models/")
		m, _, _ := strings.Cut(after, ":")
		return m
	case api == apiBedrock || api == apiAnthropic && strings.Contains(path, "/model/"):
		return bedrockModel(path)
	}
	return ""
}

// bedrockModel is the model id of a Bedrock URL path .../model/M/...,
// path-unescaped; of an ARN, the part after its last "/".
func bedrockModel(path string) string {
	_, after, _ := strings.Cut(path, "/model/")
	id, _, _ := strings.Cut(after, "/")
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	if strings.HasPrefix(id, "arn:") {
		id = id[strings.LastIndex(id, "/")+1:]
	}
	return id
}

// wire is every field folding reads, of both APIs.
type wire struct {
	Type    string          `json:"type"`
	Model   string          `json:"model"`
	Index   int             `json:"index"`
	Content json.RawMessage `json:"content"`
	// Anthropic
	StopReason   string     `json:"stop_reason"`
	Usage        *wireUsage `json:"usage"`
	Message      *wire      `json:"message"`
	ContentBlock *wireBlock `json:"content_block"`
	Delta        *wireDelta `json:"delta"`
	Error        *wireError `json:"error"`
	// OpenAI
	Choices []wireChoice `json:"choices"`
}

type wireBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type wireDelta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	PartialJSON string          `json:"partial_json"`
	StopReason  string          `json:"stop_reason"`
	Content     json.RawMessage `json:"content"`
	ToolCalls   []wireToolCall  `json:"tool_calls"`
}

type wireError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Message      *wireDelta `json:"message"`
	Delta        *wireDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type wireToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheCreation       int64 `json:"cache_creation_input_tokens"`
	CacheRead           int64 `json:"cache_read_input_tokens"`
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() Usage {
	v := Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheRead, CacheWrite: u.CacheCreation}
	if u.PromptTokens > 0 || u.CompletionTokens > 0 {
		v.Input, v.Output = u.PromptTokens, u.CompletionTokens
		if d := u.PromptTokensDetails; d != nil {
			v.Input -= d.CachedTokens
			v.CacheRead += d.CachedTokens
		}
	}
	return v
}

// add folds one JSON document (a body, or a frame's data).
func (f *folder) add(d doc) {
	event, data := d.event, d.data
	var w wire
	if json.Unmarshal(data, &w) != nil {
		return
	}
	if f.m.Model == "" {
		f.m.Model = w.Model
	}
	if w.Error != nil {
		f.m.ErrorType, f.m.ErrorMessage = w.Error.Type, w.Error.Message
		if f.m.ErrorType == "" {
			f.m.ErrorType = strings.Trim(string(w.Error.Code), `"`)
		}
	}
	if event == "" {
		event = w.Type
	}
	switch event {
	case "message", "message_start":
		f.anthropicMessage(&w)
	case "content_block_start":
		if w.ContentBlock != nil {
			f.startBlock(w.Index, w.ContentBlock)
		}
	case "content_block_delta":
		f.blockDelta(w.Index, w.Delta)
	case "message_delta":
		if w.Delta != nil && w.Delta.StopReason != "" {
			f.m.StopReason = w.Delta.StopReason
		}
		if w.Usage != nil {
			// Cumulative counts: message_start's output count was a
			// placeholder; input counts appear here only when they changed.
			u := w.Usage.usage()
			f.m.Usage.Output = u.Output
			if u.Input > 0 {
				f.m.Usage.Input = u.Input
			}
		}
	}
	for _, c := range w.Choices {
		f.choice(c)
	}
	if len(w.Choices) > 0 || w.Type == "" {
		if w.Usage != nil {
			f.m.Usage = w.Usage.usage()
		}
	}
}

// anthropicMessage folds a whole message (a JSON body, or message_start).
func (f *folder) anthropicMessage(w *wire) {
	if w.Message != nil {
		w = w.Message
		if f.m.Model == "" {
			f.m.Model = w.Model
		}
	}
	if w.StopReason != "" {
		f.m.StopReason = w.StopReason
	}
	if w.Usage != nil {
		f.m.Usage = w.Usage.usage()
	}
	var blocks []wireBlock
	if json.Unmarshal(w.Content, &blocks) != nil {
		return
	}
	for i := range blocks {
		f.startBlock(len(f.blocks), &blocks[i])
	}
}

func (f *folder) startBlock(index int, b *wireBlock) {
	bl := &block{typ: b.Type}
	bl.text.WriteString(b.Text)
	bl.call = ToolCall{ID: b.ID, Name: b.Name}
	if in := bytes.TrimSpace(b.Input); len(in) > 0 && !bytes.Equal(in, []byte("{}")) {
		bl.whole = in
	}
	f.blocks[index] = bl
}

func (f *folder) blockDelta(index int, d *wireDelta) {
	bl := f.blocks[index]
	if d == nil || bl == nil {
		return
	}
	switch d.Type {
	case "text_delta":
		bl.text.WriteString(d.Text)
	case "input_json_delta":
		bl.input.WriteString(d.PartialJSON)
	}
}

// choice folds an OpenAI choice: a whole message, or a chunk's delta.
// Only choice 0 is read: the pipelines this serves ask for one.
func (f *folder) choice(c wireChoice) {
	if c.Index != 0 {
		return
	}
	if c.FinishReason != "" {
		f.m.StopReason = c.FinishReason
	}
	d := c.Message
	if d == nil {
		d = c.Delta
	}
	if d == nil {
		return
	}
	var content string
	if json.Unmarshal(d.Content, &content) == nil {
		f.text.WriteString(content)
	}
	for _, tc := range d.ToolCalls {
		call := f.calls[tc.Index]
		if call == nil {
			call = &chunkedCall{}
			f.calls[tc.Index] = call
		}
		if tc.ID != "" {
			call.id = tc.ID
		}
		call.name.WriteString(tc.Function.Name)
		call.args.WriteString(tc.Function.Arguments)
	}
}

// finish assembles text and tool calls in index order.
func (f *folder) finish() {
	for _, i := range sortedKeys(f.blocks) {
		bl := f.blocks[i]
		switch bl.typ {
		case "text":
			f.text.WriteString(bl.text.String())
		case "tool_use", "server_tool_use":
			args := string(bl.whole)
			if bl.input.Len() > 0 {
				args = bl.input.String()
			}
			bl.call.Arguments = args
			f.m.ToolCalls = append(f.m.ToolCalls, bl.call)
		}
	}
	for _, i := range sortedKeys(f.calls) {
		c := f.calls[i]
		f.m.ToolCalls = append(f.m.ToolCalls, ToolCall{ID: c.id, Name: c.name.String(), Arguments: c.args.String()})
	}
	f.m.Text = f.text.String()
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// scalar is the text of a JSON string or number, "" for anything else.
func scalar(raw json.RawMessage) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return ""
}
