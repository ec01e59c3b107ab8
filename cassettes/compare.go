package cassettes

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
)

// FileName is the cassette file name for one path ("happy", "retry") of
// one fixture scenario: "<scenario>.<path>.yaml".
func FileName(scenario, path string) string { return scenario + "." + path + ".yaml" }

// tokenUsage is token usage summed over responses.
type tokenUsage struct {
	InputTokens  int64
	OutputTokens int64
}

// Change summarises what re-recording changed in one cassette.
// Interactions are paired by request key, in order.
type Change struct {
	OldDigest, NewDigest             string // OldDigest is "" for a new cassette
	Added, Removed, Changed, Same    int
	TextChanged                      bool
	Model                            string
	OldInputTokens, OldOutputTokens  int64 // summed over the responses
	NewInputTokens, NewOutputTokens  int64
	OldInteractions, NewInteractions int
}

// Compare summarises the difference between the cassette at oldPath
// (which may not exist) and the one at newPath.
func Compare(oldPath, newPath string) (*Change, error) {
	np, err := readCassette(newPath, "")
	if err != nil {
		return nil, err
	}
	ch := &Change{NewDigest: np.digest.String(), NewInteractions: len(np.c.Interactions)}
	var op *parsed
	if _, err := os.Stat(oldPath); err == nil {
		if op, err = readCassette(oldPath, ""); err != nil {
			return nil, err
		}
		ch.OldDigest, ch.OldInteractions = op.digest.String(), len(op.c.Interactions)
	}
	oldByKey := map[key][]int{}
	var oldText, newText strings.Builder
	if op != nil {
		for i, k := range op.keys {
			oldByKey[k] = append(oldByKey[k], i)
			info := responseInfo(op.c.Interactions[i].Response.Body, op.c.Interactions[i].Response.Headers)
			oldText.WriteString(info.text + "\x00")
			ch.OldInputTokens += info.usage.InputTokens
			ch.OldOutputTokens += info.usage.OutputTokens
		}
	}
	for i, k := range np.keys {
		r := np.c.Interactions[i].Response
		info := responseInfo(r.Body, r.Headers)
		if ch.Model == "" {
			ch.Model = info.model // modelOf(np), from the pass we make anyway
		}
		newText.WriteString(info.text + "\x00")
		ch.NewInputTokens += info.usage.InputTokens
		ch.NewOutputTokens += info.usage.OutputTokens
		q := oldByKey[k]
		if len(q) == 0 {
			ch.Added++
			continue
		}
		o := op.c.Interactions[q[0]].Response
		oldByKey[k] = q[1:]
		if o.Code == r.Code && o.Body == r.Body {
			ch.Same++
		} else {
			ch.Changed++
		}
	}
	for _, q := range oldByKey {
		ch.Removed += len(q)
	}
	ch.TextChanged = op != nil && oldText.String() != newText.String()
	return ch, nil
}

func modelOf(p *parsed) string {
	for _, in := range p.c.Interactions {
		if m := responseInfo(in.Response.Body, in.Response.Headers).model; m != "" {
			return m
		}
	}
	return ""
}

type respInfo struct {
	model string
	text  string
	usage tokenUsage
}

// responseInfo extracts model, text and usage from an Anthropic or OpenAI
// response body, JSON or server-sent events. Unknown shapes give zeros.
func responseInfo(body string, h map[string][]string) respInfo {
	var info respInfo
	if isSSE(http.Header(h)) {
		for frame := range sseFrames(body) {
			if data := sseData(frame); data != "" {
				info.addEvent(data)
			}
		}
		return info
	}
	info.addEvent(body)
	return info
}

type wireUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

type wireMessage struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage   *wireUsage `json:"usage"`
	Message *struct {
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	Choices []struct {
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

func (info *respInfo) addEvent(data string) {
	var m wireMessage
	if json.Unmarshal([]byte(data), &m) != nil {
		return
	}
	if m.Model != "" && info.model == "" {
		info.model = m.Model
	}
	for _, c := range m.Content {
		if c.Type == "text" {
			info.text += c.Text
		}
	}
	for _, c := range m.Choices {
		if c.Message != nil {
			info.text += c.Message.Content
		}
		if c.Delta != nil {
			info.text += c.Delta.Content
		}
	}
	if m.Delta != nil && m.Delta.Type == "text_delta" {
		info.text += m.Delta.Text
	}
	if m.Message != nil {
		if info.model == "" {
			info.model = m.Message.Model
		}
		if m.Message.Usage != nil {
			info.usage.InputTokens += m.Message.Usage.InputTokens
			info.usage.OutputTokens += m.Message.Usage.OutputTokens
		}
	}
	if u := m.Usage; u != nil {
		if m.Type == "message_delta" {
			// message_delta carries cumulative counts; message_start's
			// output count was a placeholder.
			if u.InputTokens > 0 {
				info.usage.InputTokens = u.InputTokens
			}
			info.usage.OutputTokens = u.OutputTokens
		} else {
			info.usage.InputTokens += u.InputTokens + u.PromptTokens
			info.usage.OutputTokens += u.OutputTokens + u.CompletionTokens
		}
	}
}
