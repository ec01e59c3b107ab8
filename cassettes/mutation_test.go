package cassettes

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mutant is one changed copy of a recorded request.
type mutant struct {
	what   string
	method string
	url    string
	header http.Header
	body   []byte
}

// TestEveryMutantMisses proves matching strict about meaning: for every
// request of every committed cassette, and of a cassette of the providers'
// request shapes (providerShapes), each change of a JSON leaf (value,
// type, removal), each value replaced by null, each added key, another
// method, path or query value, another value of each meaningful header the
// recording has, and each change of a multipart part (name, file name,
// header, content, removal, order, an added part) must miss, a compressed
// body being changed before it is compressed again; the unchanged request
// must be served, and so must each request that means the same in other
// bytes (equivalentsOf): an object member whose value is null removed, or
// one added, among them.
func TestEveryMutantMisses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("testdata", "recorders", "*.yaml"))
	require.NoError(t, err)
	files = append(files, more...)
	require.NotEmpty(t, files)
	providers := filepath.Join(t.TempDir(), "providers.yaml")
	recordShapes(t, providers, providerShapes(t))
	files = append(files, providers)
	killed, total := 0, 0
	var survivors []string
	for _, f := range files {
		p, err := readCassette(f, "")
		require.NoError(t, err)
		for i, in := range p.c.Interactions {
			base := mutant{what: "unchanged", method: in.Request.Method, url: in.Request.URL,
				header: canonicalKeys(in.Request.Headers).Clone(), body: []byte(in.Request.Body)}
			require.NoError(t, sendMutant(f, base), "%s interaction %d is not served unchanged", f, i)
			for _, m := range equivalentsOf(t, base) {
				require.NoError(t, sendMutant(f, m), "%s interaction %d is not served %s", f, i, m.what)
			}
			k, n := 0, 0
			for _, m := range mutantsOf(t, base) {
				n++
				err := sendMutant(f, m)
				if errorsIsMiss(err) {
					k++
					continue
				}
				survivors = append(survivors, fmt.Sprintf("%s #%d: %s (%v)", f, i, m.what, err))
			}
			if f == providers {
				t.Logf("%s %s: %d/%d mutants killed", in.Request.Method, in.Request.URL, k, n)
			}
			killed, total = killed+k, total+n
		}
	}
	t.Logf("request mutants killed: %d/%d", killed, total)
	require.Empty(t, survivors, "mutants served by a recorded interaction")
	require.Greater(t, total, 100)
}

func errorsIsMiss(err error) bool {
	return err != nil && strings.Contains(err.Error(), ErrInteractionNotFound.Error())
}

// sendMutant replays m against a fresh Open of the cassette at path.
func sendMutant(path string, m mutant) error {
	c, err := Open(path, Config{AllowUnused: true, skipSecretCheck: true})
	if err != nil {
		return err
	}
	defer c.Close()
	req, err := http.NewRequest(m.method, m.url, bytes.NewReader(m.body))
	if err != nil {
		return err
	}
	req.Header = m.header
	resp, err := c.Transport().RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func mutantsOf(t *testing.T, base mutant) []mutant {
	var out []mutant
	with := func(what string, f func(m *mutant)) {
		m := base
		m.what = what
		m.header = base.header.Clone()
		f(&m)
		out = append(out, m)
	}
	other := "PUT"
	if base.method == "PUT" {
		other = "POST"
	}
	with("method "+other, func(m *mutant) { m.method = other })
	u, err := url.Parse(base.url)
	require.NoError(t, err)
	with("path", func(m *mutant) { v := *u; v.Path += "x"; v.RawPath = ""; m.url = v.String() })
	q := u.Query()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if !yield(k) {
				return
			}
		}
	}) {
		with("query "+k, func(m *mutant) {
			v := *u
			qq := v.Query()
			qq.Set(k, qq.Get(k)+"x")
			v.RawQuery = qq.Encode()
			m.url = v.String()
		})
	}
	// The headers the package documentation names as meaningful, listed
	// here rather than taken from the code under test.
	for _, h := range []string{"Anthropic-Version", "Anthropic-Beta", "Content-Type", "Openai-Beta"} {
		if base.header.Get(h) != "" {
			with("header "+h, func(m *mutant) { m.header.Set(h, "mutated/"+h) })
		}
	}
	if len(base.body) == 0 {
		return out
	}
	if parts, ok := partsOf(base); ok {
		return append(out, partMutants(t, base, parts)...)
	}
	if base.header.Get("Content-Encoding") == "gzip" {
		plain := base
		plain.body = gunzip(t, base.body)
		plain.header = base.header.Clone()
		plain.header.Del("Content-Encoding")
		for _, m := range mutantsOf(t, plain)[len(out):] {
			m.header = base.header.Clone()
			m.body = gzipBytes(t, m.body)
			out = append(out, m)
		}
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(base.body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		with("body byte", func(m *mutant) { m.body = append(bytes.Clone(m.body), 'x') })
		return out
	}
	changes, _ := jsonEdits(doc, "")
	for _, e := range changes {
		with(e.what, func(m *mutant) {
			b, err := json.Marshal(e.apply(deepCopy(doc)))
			require.NoError(t, err)
			m.body = b
		})
	}
	return out
}

// jsonEdit is one change to a decoded JSON document.
type jsonEdit struct {
	what  string
	apply func(doc any) any
}

// jsonEdits lists, for every leaf under v, a changed value, a changed type
// and its removal, for every value a null in its place, and for every
// object an added key: changes of meaning. same lists the edits that keep
// the meaning: for every object a member added with the value null, and
// the removal of every member whose value is null.
func jsonEdits(v any, path string) (changes, same []jsonEdit) {
	at := func(what string, set func(parent any) any) jsonEdit {
		return jsonEdit{what: path + ": " + what, apply: func(doc any) any { return editAt(doc, path, set) }}
	}
	if v != nil && path != "" {
		changes = append(changes, at("null", func(any) any { return nil }))
	}
	switch x := v.(type) {
	case map[string]any:
		changes = append(changes, at("key added", func(p any) any { p.(map[string]any)["mutant_key"] = json.Number("1"); return p }))
		same = append(same, at("null member added", func(p any) any { p.(map[string]any)["mutant_null"] = nil; return p }))
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			removed := jsonEdit{what: path + "/" + k + ": removed", apply: func(doc any) any {
				return editAt(doc, path, func(p any) any { delete(p.(map[string]any), k); return p })
			}}
			if x[k] == nil {
				same = append(same, removed)
			} else {
				changes = append(changes, removed)
			}
			c, s := jsonEdits(x[k], path+"/"+k)
			changes, same = append(changes, c...), append(same, s...)
		}
	case []any:
		for i := range x {
			changes = append(changes, jsonEdit{what: fmt.Sprintf("%s/%d: removed", path, i), apply: func(doc any) any {
				return editAt(doc, path, func(p any) any { a := p.([]any); return append(a[:i:i], a[i+1:]...) })
			}})
			c, s := jsonEdits(x[i], fmt.Sprintf("%s/%d", path, i))
			changes, same = append(changes, c...), append(same, s...)
		}
	case string:
		changes = append(changes, at("value", func(any) any { return x + "x" }), at("type", func(any) any { return json.Number("0") }))
	case json.Number:
		changes = append(changes, at("value", func(any) any { return bump(x) }), at("type", func(any) any { return string(x) }))
	case bool:
		changes = append(changes, at("value", func(any) any { return !x }), at("type", func(any) any { return fmt.Sprint(x) }))
	case nil:
		changes = append(changes, at("type", func(any) any { return json.Number("0") }))
	}
	return changes, same
}

// editAt replaces the value at path (slash-separated keys and indices)
// with set(value).
func editAt(doc any, path string, set func(any) any) any {
	if path == "" {
		return set(doc)
	}
	head, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if rest != "" {
		rest = "/" + rest
	}
	switch x := doc.(type) {
	case map[string]any:
		x[head] = editAt(x[head], rest, set)
	case []any:
		var i int
		fmt.Sscan(head, &i)
		x[i] = editAt(x[i], rest, set)
	}
	return doc
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// bump is n plus one.
func bump(n json.Number) json.Number {
	if i, err := n.Int64(); err == nil {
		return json.Number(strconv.FormatInt(i+1, 10))
	}
	f, _ := n.Float64()
	return json.Number(strconv.FormatFloat(f+1, 'g', -1, 64))
}

// okAPI answers every request with a small JSON body.
type okAPI struct{}

func (okAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body) // go-vcr records the body as it is read
	w := httptest.NewRecorder()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
	resp := w.Result()
	resp.Request = req
	return resp, nil
}

// recordShapes records one interaction per request of reqs, in order,
// into a new cassette at path.
func recordShapes(t *testing.T, path string, reqs []mutant) {
	t.Helper()
	c, err := Open(path, Config{Mode: Record, RealTransport: okAPI{}})
	require.NoError(t, err)
	for _, m := range reqs {
		req, err := http.NewRequest(m.method, m.url, bytes.NewReader(m.body))
		require.NoError(t, err)
		req.Header = m.header.Clone()
		resp, err := c.Client().Do(req)
		require.NoError(t, err, m.what)
		resp.Body.Close()
	}
	require.NoError(t, c.Close())
}

// formPart is one part of a multipart/form-data body.
type formPart struct {
	name, filename, contentType string
	content                     []byte
}

// multipartBody encodes parts with boundary, as mime/multipart writes
// them; it returns the body and its Content-Type.
func multipartBody(t testing.TB, boundary string, parts []formPart) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	require.NoError(t, w.SetBoundary(boundary))
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := mime.FormatMediaType("form-data", map[string]string{"name": p.name})
		if p.filename != "" {
			cd = mime.FormatMediaType("form-data", map[string]string{"name": p.name, "filename": p.filename})
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		require.NoError(t, err)
		_, err = pw.Write(p.content)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return b.Bytes(), w.FormDataContentType()
}

// partsOf decodes a multipart/form-data request's parts.
func partsOf(m mutant) ([]formPart, bool) {
	mt, params, err := mime.ParseMediaType(m.header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, false
	}
	r := multipart.NewReader(bytes.NewReader(m.body), params["boundary"])
	var out []formPart
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, false
		}
		out = append(out, formPart{name: p.FormName(), filename: p.FileName(), contentType: p.Header.Get("Content-Type"), content: content})
	}
}

// partMutants changes each part of a multipart request in turn (its name,
// file name, content type, content, its removal), adds a part and swaps
// the first two, each encoded with a new boundary.
func partMutants(t *testing.T, base mutant, parts []formPart) []mutant {
	var out []mutant
	with := func(what string, edit func(ps []formPart) []formPart) {
		ps := make([]formPart, len(parts))
		for i, p := range parts {
			p.content = bytes.Clone(p.content)
			ps[i] = p
		}
		m := base
		m.what = what
		m.header = base.header.Clone()
		var ct string
		m.body, ct = multipartBody(t, "mutant-boundary-0123456789", edit(ps))
		m.header.Set("Content-Type", ct)
		out = append(out, m)
	}
	for i, p := range parts {
		with(fmt.Sprintf("part %d (%s): name", i, p.name), func(ps []formPart) []formPart { ps[i].name += "x"; return ps })
		with(fmt.Sprintf("part %d (%s): content", i, p.name), func(ps []formPart) []formPart { ps[i].content = append(ps[i].content, 'x'); return ps })
		if len(p.content) > 0 {
			with(fmt.Sprintf("part %d (%s): content byte", i, p.name), func(ps []formPart) []formPart { ps[i].content[0] ^= 1; return ps })
		}
		if p.filename != "" {
			with(fmt.Sprintf("part %d (%s): file name", i, p.name), func(ps []formPart) []formPart { ps[i].filename = "x" + ps[i].filename; return ps })
		}
		with(fmt.Sprintf("part %d (%s): content type", i, p.name), func(ps []formPart) []formPart { ps[i].contentType = "application/x-mutant"; return ps })
		with(fmt.Sprintf("part %d (%s): removed", i, p.name), func(ps []formPart) []formPart { return slices.Delete(ps, i, i+1) })
	}
	with("part added", func(ps []formPart) []formPart { return append(ps, formPart{name: "mutant", content: []byte("1")}) })
	if len(parts) > 1 {
		with("parts 0 and 1 swapped", func(ps []formPart) []formPart { ps[0], ps[1] = ps[1], ps[0]; return ps })
	}
	return out
}

// equivalentsOf returns requests that mean what base means in other
// bytes: a multipart body under another boundary; a gzip body
// uncompressed, and compressed with a header naming a file; a JSON body
// with a member of value null added to an object, or one removed.
func equivalentsOf(t *testing.T, base mutant) []mutant {
	var out []mutant
	dec := json.NewDecoder(bytes.NewReader(base.body))
	dec.UseNumber()
	var doc any
	if base.header.Get("Content-Encoding") == "" && dec.Decode(&doc) == nil {
		_, same := jsonEdits(doc, "")
		for _, e := range same {
			m := base
			m.what = e.what
			b, err := json.Marshal(e.apply(deepCopy(doc)))
			require.NoError(t, err)
			m.body = b
			out = append(out, m)
		}
	}
	if parts, ok := partsOf(base); ok {
		m := base
		m.what = "with another boundary"
		m.header = base.header.Clone()
		var ct string
		m.body, ct = multipartBody(t, "another-boundary", parts)
		m.header.Set("Content-Type", ct)
		out = append(out, m)
	}
	if base.header.Get("Content-Encoding") == "gzip" {
		m := base
		m.what = "uncompressed"
		m.header = base.header.Clone()
		m.header.Del("Content-Encoding")
		m.body = gunzip(t, base.body)
		out = append(out, m)
		m.what = "compressed again, with a file name"
		m.header = base.header.Clone()
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Name = "body.json"
		_, err := w.Write(gunzip(t, base.body))
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NotEqual(t, base.body, b.Bytes())
		m.body = b.Bytes()
		out = append(out, m)
	}
	return out
}

func gzipBytes(t testing.TB, b []byte) []byte {
	return []byte(gzipped(t, string(b)))
}

func gunzip(t testing.TB, b []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}

// providerShapes are requests as the official SDKs and Ollama send them:
// Gemini generateContent (and its SSE stream), Bedrock Converse (signed),
// the Responses API, Ollama's /api/chat, a multipart upload and a gzip
// request.
func providerShapes(t testing.TB) []mutant {
	jsonHeader := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	gemini := `{"contents":[{"role":"user","parts":[{"text":"Summarise the diff."}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},` +
		`"generationConfig":{"temperature":0,"maxOutputTokens":256,"candidateCount":1},` +
		`"tools":[{"functionDeclarations":[{"name":"apply_patch","description":"Apply a patch","parameters":{"type":"OBJECT","properties":{"patch":{"type":"STRING"}},"required":["patch"]}}]}]}`
	audio, ct := multipartBody(t, "2f1b7c0e9d8a6b5c4d3e2f1a0b9c8d7e", []formPart{
		{name: "file", filename: "clip.wav", contentType: "audio/wav", content: []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\xff\xfe")},
		{name: "model", content: []byte("whisper-1")},
		{name: "response_format", content: []byte("json")},
		{name: "temperature", content: []byte("0")},
	})
	return []mutant{
		{what: "gemini generateContent", method: "POST",
			url:    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent",
			header: jsonHeader("X-Goog-Api-Key", "REDACTED"), body: []byte(gemini)},
		{what: "gemini streamGenerateContent", method: "POST",
			url:    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
			header: jsonHeader("X-Goog-Api-Key", "REDACTED"), body: []byte(gemini)},
		{what: "bedrock converse", method: "POST",
			url:    "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse",
			header: jsonHeader("Authorization", "REDACTED", "X-Amz-Date", "20261127T000000Z", "Amz-Sdk-Invocation-Id", "0b0e7c1e-0000-4000-8000-000000000000"),
			body: []byte(`{"messages":[{"role":"user","content":[{"text":"Summarise the diff."}]}],"system":[{"text":"Be brief."}],` +
				`"inferenceConfig":{"maxTokens":256,"temperature":0,"stopSequences":["END"]},` +
				`"toolConfig":{"tools":[{"toolSpec":{"name":"apply_patch","inputSchema":{"json":{"type":"object","properties":{"patch":{"type":"string"}}}}}}],"toolChoice":{"auto":{}}}}`)},
		{what: "responses", method: "POST", url: "https://api.openai.com/v1/responses",
			header: jsonHeader("Authorization", "REDACTED", "Openai-Beta", "responses=v1"),
			body: []byte(`{"model":"gpt-4.1","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Summarise the diff."}]}],` +
				`"temperature":0,"max_output_tokens":256,"stream":true,"store":false,"tools":[{"type":"function","name":"apply_patch","parameters":{"type":"object","properties":{"patch":{"type":"string"}}},"strict":true}],"reasoning":null}`)},
		{what: "ollama chat", method: "POST", url: "http://localhost:11434/api/chat", header: jsonHeader(),
			body: []byte(`{"model":"llama3.2","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Summarise the diff."}],"stream":true,"options":{"temperature":0,"seed":42,"num_predict":256},"keep_alive":"5m"}`)},
		{what: "multipart upload", method: "POST", url: "https://api.openai.com/v1/audio/transcriptions",
			header: http.Header{"Content-Type": {ct}, "Authorization": {"REDACTED"}}, body: audio},
		{what: "gzip request", method: "POST", url: "https://api.anthropic.com/v1/messages",
			header: jsonHeader("Anthropic-Version", "2023-06-01", "Content-Encoding", "gzip", "X-Api-Key", "REDACTED"),
			body:   gzipBytes(t, []byte(`{"model":"claude-sonnet-4-5","max_tokens":256,"temperature":0,"messages":[{"role":"user","content":"Summarise the diff."}]}`))},
	}
}
