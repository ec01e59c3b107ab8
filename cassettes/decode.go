package cassettes

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// A cassette is decoded by yaml.v3 into go-vcr's types, as go-vcr's
// cassette.Load decodes it. yaml.v3 builds a node tree of the whole
// document first, some 25 times the size of the text, so a cassette in
// the layout go-vcr writes is decoded in batches of interactions of about
// batchBytes each, one tree at a time: memory stays near the size of the
// text and what is decoded, whatever the number of interactions. A body
// the text holds as it decodes (see shareBodies) is not copied: it shares
// the text's bytes, which the parsed cassette keeps anyway.
//
// Batches decode what the whole document decodes. Every line that is not
// blank is indented more than the first interaction's "- ", or as much
// and starts an interaction, so the interactions run to the end of the
// document. Each batch starts at a line that starts an interaction:
// such a line cannot lie inside a block scalar or a plain scalar, which
// end at any line indented that little, and a split inside a quoted
// scalar or a flow collection leaves a batch unterminated, which fails. An
// alias resolves, within its batch, to the anchor the whole document
// resolves it to; one whose anchor lies in an earlier batch fails. A text
// that fails, or is not in that layout, is decoded whole, if it is at
// most maxTreeBytes long.

// goVCRHead is the text before the first interaction of a cassette as
// go-vcr writes it.
var goVCRHead = regexp.MustCompile(`\A(?:---\n)?version: 2\ninteractions:\n`)

// batchBytes is about how much text one batch holds.
const batchBytes = 64 << 10

// maxTreeBytes bounds the cassettes decoded whole: their node tree is
// some 25 times the size of the text.
const maxTreeBytes = 16 << 20

// decodeCassette decodes raw in batches when it can, else whole.
func decodeCassette(path string, raw []byte, refresh string) (*cassette.Cassette, []int, error) {
	c, lines, err := decodeBatched(raw, batchBytes)
	if err == nil {
		return c, lines, nil
	}
	if len(raw) > maxTreeBytes {
		return nil, nil, invalidFunc(path, refresh)(errLine(err),
			"%v (a cassette over %d bytes is read only in the layout go-vcr writes, with no alias to an anchor more than %d bytes before it)", err, maxTreeBytes, batchBytes)
	}
	return decodeYAML(path, raw, refresh)
}

// errNotBatched: the text is not in the layout go-vcr writes.
var errNotBatched = fmt.Errorf("not in the layout go-vcr writes")

// decodeBatched decodes raw in batches of about size bytes; it fails when
// raw is not in the layout go-vcr writes or a batch does not decode alone.
// Lines in its errors are lines of raw.
func decodeBatched(raw []byte, size int) (*cassette.Cassette, []int, error) {
	m := goVCRHead.FindIndex(raw)
	if m == nil {
		return nil, nil, errNotBatched
	}
	body := raw[m[1]:]
	indent := 0
	for indent < len(body) && body[indent] == ' ' {
		indent++
	}
	if indent+1 >= len(body) || body[indent] != '-' || body[indent+1] != ' ' || !itemsOnly(body, indent) {
		return nil, nil, errNotBatched
	}
	start := append([]byte{'\n'}, bytes.Repeat([]byte{' '}, indent)...)
	start = append(start, '-', ' ')
	c := cassette.New("")
	c.IsNew = false
	line := bytes.Count(raw[:m[1]], []byte{'\n'}) + 1 // of the batch's first line
	var lines, starts []int
	for len(body) > 0 {
		end := len(body)
		if len(body) > size {
			if i := bytes.Index(body[size:], start); i >= 0 {
				end = size + i + 1
			}
		}
		batch := body[:end]
		body = body[end:]
		var doc yaml.Node
		if err := yaml.Unmarshal(batch, &doc); err != nil {
			return nil, nil, shiftLines(err, line-1)
		}
		if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
			return nil, nil, errNotBatched
		}
		seq := doc.Content[0]
		var ins []*cassette.Interaction
		if err := seq.Decode(&ins); err != nil {
			return nil, nil, shiftLines(err, line-1)
		}
		for _, n := range seq.Content {
			lines = append(lines, line-1+n.Line)
		}
		starts = shareBodies(batch, seq, ins, starts[:0])
		c.Interactions = append(c.Interactions, ins...)
		line += bytes.Count(batch, []byte{'\n'})
	}
	if len(lines) != len(c.Interactions) {
		return nil, nil, errNotBatched
	}
	return c, lines, nil
}

// shareBodies makes each request and response body of the interactions
// ins, decoded from the items of seq, the nodes of text, share text's
// bytes where text holds the body as it decodes (a plain, single- or
// double-quoted scalar on one line, without escapes): the decoded copy is
// dropped, so the bodies of a cassette whose text is kept are held once.
// text must never be written afterwards. It returns the offsets of text's
// lines, appended to starts (empty), whose array it reuses.
func shareBodies(text []byte, seq *yaml.Node, ins []*cassette.Interaction, starts []int) []int {
	for k, item := range seq.Content {
		if k >= len(ins) || ins[k] == nil {
			continue
		}
		for _, side := range []struct {
			name string
			body *string
		}{{"request", &ins[k].Request.Body}, {"response", &ins[k].Response.Body}} {
			for _, r := range mappingValues(resolve(item), side.name) {
				for _, n := range mappingValues(resolve(r), "body") {
					if len(starts) == 0 {
						starts = lineStarts(text, starts)
					}
					shareScalar(text, starts, n, side.body)
				}
			}
		}
	}
	return starts
}

// shareScalar points *s at the bytes of text that scalar node n, whose
// decoded value *s is, is written with, when they are the same bytes.
// starts are the offsets of text's lines.
func shareScalar(text []byte, starts []int, n *yaml.Node, s *string) {
	v := *s
	if n.Kind != yaml.ScalarNode || n.Value != v || v == "" || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
		n.Line < 1 || n.Line > len(starts) || n.Column < 1 {
		return
	}
	off := starts[n.Line-1]
	// A column counts runes: where the line is ASCII up to it, bytes.
	for i := 0; i < n.Column-1; i++ {
		if off+i >= len(text) || text[off+i] >= utf8.RuneSelf {
			return
		}
	}
	off += n.Column - 1
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		off++
	}
	if off+len(v) <= len(text) && string(text[off:off+len(v)]) == v {
		*s = unsafe.String(&text[off], len(v))
	}
}

// lineStarts appends the offset of each line of text to starts.
func lineStarts(text []byte, starts []int) []int {
	starts = append(starts, 0)
	for off := 0; ; {
		i := bytes.IndexByte(text[off:], '\n')
		if i < 0 {
			return starts
		}
		off += i + 1
		starts = append(starts, off)
	}
}

// itemsOnly reports whether every line of body that is not blank is
// indented more than indent spaces, or exactly that much and starts an
// item ("- "): then the document's interactions run to its end, with
// nothing of the top-level mapping (another key, a document marker, a
// comment) after them, so the whole document decodes what its batches do.
func itemsOnly(body []byte, indent int) bool {
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		k := 0
		for k < len(line) && line[k] == ' ' {
			k++
		}
		switch {
		case k == len(line) || k > indent:
		case k < indent || line[k] != '-' || k+1 < len(line) && line[k+1] != ' ':
			return false
		}
	}
	return true
}

// shiftLines returns err with each "line N" it mentions moved by n lines.
func shiftLines(err error, n int) error {
	return fmt.Errorf("%s", yamlLine.ReplaceAllStringFunc(err.Error(), func(s string) string {
		k, _ := strconv.Atoi(s[len("line "):])
		return "line " + strconv.Itoa(k+n)
	}))
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// errLine extracts the first "line N" a yaml error mentions.
func errLine(err error) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// decodeYAML decodes raw with yaml.v3 as go-vcr does (aliases, merge keys
// and !!binary resolved by yaml.v3), returning the cassette and the line of
// each interaction.
func decodeYAML(path string, raw []byte, refresh string) (*cassette.Cassette, []int, error) {
	invalid := invalidFunc(path, refresh)
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, nil, invalid(errLine(err), "%v (the file is truncated or is not YAML)", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil, invalid(1, "empty file")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, invalid(root.Line, "top level is not a mapping")
	}
	var versionNode, interactionsNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "version":
			versionNode = root.Content[i+1]
		case "interactions":
			interactionsNode = root.Content[i+1]
		}
	}
	if versionNode == nil {
		return nil, nil, newErr(path, root.Line, "parse", detailf(errUnsupportedVersion,
			"%v: no version field; go-vcr v3 reads format version %d", errUnsupportedVersion, cassette.CassetteFormatV2))
	}
	var version int
	if err := versionNode.Decode(&version); err != nil || version != cassette.CassetteFormatV2 {
		return nil, nil, newErr(path, versionNode.Line, "parse", detailf(errUnsupportedVersion,
			"%v: version %q, want %d (go-vcr v3 format); re-record it: %s",
			errUnsupportedVersion, versionNode.Value, cassette.CassetteFormatV2, refresh))
	}
	c := cassette.New("")
	c.IsNew = false
	if err := root.Decode(c); err != nil {
		return nil, nil, invalid(errLine(err), "%v", err)
	}
	var lines []int
	if interactionsNode = resolve(interactionsNode); interactionsNode != nil {
		if interactionsNode.Kind != yaml.SequenceNode && !(interactionsNode.Kind == yaml.ScalarNode && interactionsNode.Tag == "!!null") {
			return nil, nil, invalid(interactionsNode.Line, "interactions is not a list")
		}
		lines = make([]int, len(interactionsNode.Content))
		for i, n := range interactionsNode.Content {
			lines[i] = n.Line
		}
	}
	if len(lines) != len(c.Interactions) {
		return nil, nil, invalid(0, "decoded %d interactions from %d list items", len(c.Interactions), len(lines))
	}
	return c, lines, nil
}

// resolve follows n through aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasHops; i++ {
		n = n.Alias
	}
	return n
}

// maxAliasHops bounds the aliases resolve follows: yaml.v3 makes no alias
// of an alias, so one hop is all a document has.
const maxAliasHops = 8
