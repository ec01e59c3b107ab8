package review

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
)

// The APIs a response is folded for.
const (
	APIAnthropic = "anthropic-messages" // POST .../v1/messages
	APIOpenAI    = "openai-chat"        // POST .../chat/completions
)

// Message is a response folded into what a reviewer reads: the final
// message a client accumulates from a JSON body or from every frame of a
// server-sent-events stream.
type Message struct {
	// API is APIAnthropic, APIOpenAI or "" for a body of neither shape.
	API string `json:"api,omitempty"`
	// Status is the HTTP status.
	Status int `json:"status"`
	// Streamed says the body was an event stream of Frames frames.
	Streamed bool `json:"streamed,omitempty"`
	Frames   int  `json:"frames,omitempty"`
	// Timing is when the first and the last frame arrived, for a stream
	// recorded with frame offsets (cassettes.Recorded.FrameOffsets).
	Timing *StreamTiming `json:"timing,omitempty"`
	Model  string        `json:"model,omitempty"`
	// Text is the concatenated text of the message (Anthropic text blocks,
	// OpenAI choice 0's content), cut to Config.MaxText bytes when
	// TextCut is set.
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
		return APIAnthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return APIOpenAI
	}
	return ""
}

// folder accumulates a message from JSON documents: one body, or the
// data of each frame of a stream.
type folder struct {
	m      Message
	blocks map[int]*block // Anthropic content blocks by index
	calls  map[int]*ToolCall
	text   strings.Builder
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
	f := &folder{m: Message{API: apiOf(r.URL), Status: r.Status}, blocks: map[int]*block{}, calls: map[int]*ToolCall{}}
	streamed := false
	for frame := range r.Frames() {
		streamed = true
		f.m.Frames++
		if ev, data := parseFrame(frame); data != "" {
			f.add(ev, []byte(data))
		}
	}
	if !streamed {
		f.add("", []byte(r.ResponseBody))
	}
	f.m.Streamed = streamed
	if offs := r.FrameOffsets(); len(offs) > 0 {
		f.m.Timing = &StreamTiming{offs[0].Milliseconds(), offs[len(offs)-1].Milliseconds()}
	}
	f.finish()
	return f.m
}

// parseFrame returns the event name and the joined data lines of one
// server-sent-events frame.
func parseFrame(frame string) (event, data string) {
	var lines []string
	for line := range strings.Lines(frame) {
		line = strings.TrimRight(line, "\r\n")
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			event = value
		case "data":
			lines = append(lines, value)
		}
	}
	return event, strings.Join(lines, "\n")
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

// add folds one JSON document (a body, or a frame's data) named event.
func (f *folder) add(event string, data []byte) {
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
			call = &ToolCall{}
			f.calls[tc.Index] = call
		}
		if tc.ID != "" {
			call.ID = tc.ID
		}
		call.Name += tc.Function.Name
		call.Arguments += tc.Function.Arguments
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
		f.m.ToolCalls = append(f.m.ToolCalls, *f.calls[i])
	}
	for i, c := range f.m.ToolCalls {
		if c.Arguments == "" {
			f.m.ToolCalls[i].Arguments = "{}"
		} else if canon, err := events.CanonicalizeJSON([]byte(c.Arguments)); err == nil {
			f.m.ToolCalls[i].Arguments = string(canon)
		}
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
