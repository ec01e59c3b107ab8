package cassettes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
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
// request of every committed cassette, each change of a JSON leaf (value,
// type, removal), each added key, another method, path or query value, and
// another value of each meaningful header the recording has, must miss;
// the unchanged request must be served.
func TestEveryMutantMisses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("testdata", "recorders", "*.yaml"))
	require.NoError(t, err)
	files = append(files, more...)
	require.NotEmpty(t, files)
	killed, total := 0, 0
	var survivors []string
	for _, f := range files {
		p, err := readCassette(f, "")
		require.NoError(t, err)
		for i, in := range p.c.Interactions {
			base := mutant{what: "unchanged", method: in.Request.Method, url: in.Request.URL,
				header: canonicalKeys(in.Request.Headers).Clone(), body: []byte(in.Request.Body)}
			require.NoError(t, sendMutant(f, base), "%s interaction %d is not served unchanged", f, i)
			for _, m := range mutantsOf(t, base) {
				total++
				err := sendMutant(f, m)
				if errorsIsMiss(err) {
					killed++
					continue
				}
				survivors = append(survivors, fmt.Sprintf("%s #%d: %s (%v)", f, i, m.what, err))
			}
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
	c, err := Open(path, Options{AllowUnused: true, skipSecretCheck: true})
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
	dec := json.NewDecoder(bytes.NewReader(base.body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		with("body byte", func(m *mutant) { m.body = append(bytes.Clone(m.body), 'x') })
		return out
	}
	for _, e := range jsonEdits(doc, "") {
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
// and its removal, and for every object an added key.
func jsonEdits(v any, path string) []jsonEdit {
	var out []jsonEdit
	at := func(what string, set func(parent any) any) jsonEdit {
		return jsonEdit{what: path + ": " + what, apply: func(doc any) any { return editAt(doc, path, set) }}
	}
	switch x := v.(type) {
	case map[string]any:
		out = append(out, at("key added", func(p any) any { p.(map[string]any)["mutant_key"] = json.Number("1"); return p }))
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			out = append(out, jsonEdit{what: path + "/" + k + ": removed", apply: func(doc any) any {
				return editAt(doc, path, func(p any) any { delete(p.(map[string]any), k); return p })
			}})
			out = append(out, jsonEdits(x[k], path+"/"+k)...)
		}
	case []any:
		for i := range x {
			out = append(out, jsonEdit{what: fmt.Sprintf("%s/%d: removed", path, i), apply: func(doc any) any {
				return editAt(doc, path, func(p any) any { a := p.([]any); return append(a[:i:i], a[i+1:]...) })
			}})
			out = append(out, jsonEdits(x[i], fmt.Sprintf("%s/%d", path, i))...)
		}
	case string:
		out = append(out, at("value", func(any) any { return x + "x" }), at("type", func(any) any { return json.Number("0") }))
	case json.Number:
		out = append(out, at("value", func(any) any { return bump(x) }), at("type", func(any) any { return string(x) }))
	case bool:
		out = append(out, at("value", func(any) any { return !x }), at("type", func(any) any { return fmt.Sprint(x) }))
	case nil:
		out = append(out, at("type", func(any) any { return json.Number("0") }))
	}
	return out
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
