package review

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
)

// A shape is the set of field paths of JSON documents with the types seen
// at each: ["usage"]["input_tokens"] number. Array elements share one path
// ending in [], so a longer list has the same shape. Null is compatible
// with every type (nullable fields such as stop_reason are null in some
// events and strings in others).
type shape map[string]kinds

type kinds uint8

const (
	kNull kinds = 1 << iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

var kindNames = []string{"null", "boolean", "number", "string", "array", "object"}

func (k kinds) String() string {
	var names []string
	for i, n := range kindNames {
		if k&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// maxShapePaths bounds the paths one shape keeps: a body of untrusted
// size cannot make the review's memory grow past it.
const maxShapePaths = 4096

// addJSON adds the shape of the JSON document b under prefix. A document
// that is not JSON adds the kind "text" at prefix.
func (s shape) addJSON(prefix string, b []byte) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	if dec.Decode(&v) != nil || dec.More() {
		s.put(prefix+"(text)", kString)
		return
	}
	s.walk(prefix, v)
}

func (s shape) put(path string, k kinds) {
	if _, ok := s[path]; !ok && len(s) >= maxShapePaths {
		return
	}
	s[path] |= k
}

func (s shape) walk(path string, v any) {
	switch x := v.(type) {
	case nil:
		s.put(path, kNull)
	case bool:
		s.put(path, kBool)
	case json.Number:
		s.put(path, kNumber)
	case string:
		s.put(path, kString)
	case []any:
		s.put(path, kArray)
		for _, e := range x {
			s.walk(path+"[]", e)
		}
	case map[string]any:
		s.put(path, kObject)
		// A tool call's input is what the model chose to send, not the
		// API's schema.
		skip := toolInput(path, x)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k == skip {
				continue
			}
			s.walk(path+"["+strconv.Quote(k)+"]", x[k])
		}
	}
}

// toolInput names the field of the object x at path that holds a tool
// call's input (Anthropic tool_use input, Gemini functionCall args,
// Bedrock toolUse input, Ollama function arguments), or "".
func toolInput(path string, x map[string]any) string {
	switch {
	case x["type"] == "tool_use" || x["type"] == "server_tool_use":
		return "input"
	case strings.HasSuffix(path, `["functionCall"]`):
		return "args"
	case strings.HasSuffix(path, `["toolUse"]`):
		return "input"
	case strings.HasSuffix(path, `["function"]`):
		return "arguments"
	}
	return ""
}

// requestShape is the shape of a request body.
func requestShape(r cassettes.Recorded) shape {
	s := shape{}
	s.addJSON("", []byte(r.RequestBody))
	return s
}

// responseShape is the shape of a response body: of the body, or of every
// document of a stream under its event name (the data's "type" when the
// frame has none, "data" when neither).
func responseShape(r cassettes.Recorded) shape {
	s := shape{}
	docs, streamed, _ := documents(r, apiOf(r.URL))
	if !streamed {
		s.addJSON("", []byte(r.ResponseBody))
		return s
	}
	for _, d := range docs {
		ev := d.event
		if ev == "" {
			var t struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(d.data, &t) == nil {
				ev = t.Type
			}
		}
		if ev == "" {
			ev = "data"
		}
		s.addJSON(ev+":", d.data)
	}
	return s
}

// shapeDiff lists the schema differences from a to b, one line each:
// "added ["usage"]["service_tier"] (string)", "removed ...", "type of ...
// changed: number -> string". where names the side ("request",
// "response").
func shapeDiff(where string, a, b shape) []string {
	var out []string
	paths := slices.Sorted(maps.Keys(a))
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		ka, inA := a[p]
		kb, inB := b[p]
		name := p
		if name == "" {
			name = "(root)"
		}
		switch {
		case !inA:
			out = append(out, where+" field added: "+name+" ("+kb.String()+")")
		case !inB:
			out = append(out, where+" field removed: "+name+" ("+ka.String()+")")
		default:
			ta, tb := ka&^kNull, kb&^kNull
			if ta != 0 && tb != 0 && ta != tb {
				out = append(out, where+" field type changed: "+name+" ("+ta.String()+" -> "+tb.String()+")")
			}
		}
	}
	return out
}
