package cassettes

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"sync"

	"github.com/codegenie/codegenie/cassettes/internal/vcryaml"
	"github.com/codegenie/codegenie/events"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// parsed is a cassette file decoded, checked and indexed for replay. It is
// shared by every Open of the same content and never modified.
type parsed struct {
	path    string
	raw     []byte
	c       *cassette.Cassette
	lines   []int // 1-based line of each interaction
	canon   []*canonRequest
	keys    []key
	index   map[key][]int     // key -> interactions, in file order
	urls    map[urlKey]string // recorded URLs -> canonical URL
	resps   []respTemplate
	raw2i   map[string][]int // raw request body -> interactions, in file order
	digest  events.Digest
	headers []headerRef // every header and trailer value, for the secret scan
}

// maxCassetteBytes bounds the cassette files this package reads.
const maxCassetteBytes = 256 << 20

// parsedCache holds parsed cassettes by the blake3 of their bytes, so each
// content is parsed and indexed once per process however often it is
// opened, and a changed file is parsed anew.
var parsedCache struct {
	sync.Mutex
	m     map[events.Digest]*parsed
	bytes int
}

// maxCachedBytes bounds the file bytes parsedCache keeps (its index and
// decoded copy are of the same order); past it the cache starts over.
const maxCachedBytes = 64 << 20

var yamlLine = regexp.MustCompile(`line (\d+)`)

// lineOf extracts the first "line N" a yaml error mentions.
func lineOf(err error) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// readCassette reads and validates path. refresh is the command named when
// the file is missing.
func readCassette(path, refresh string) (*parsed, error) {
	raw, err := readBounded(path, maxCassetteBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, newErr(path, 0, "open", detailf(ErrCassetteNotFound,
			"%v: the file does not exist; record it with: %s", ErrCassetteNotFound, refresh))
	}
	if err != nil {
		return nil, newErr(path, 0, "open", err)
	}
	sum := events.Sum(raw)
	parsedCache.Lock()
	p, ok := parsedCache.m[sum]
	parsedCache.Unlock()
	if ok && p.path == path {
		return p, nil
	}
	if p, err = parseCassette(path, raw, refresh); err != nil {
		return nil, err
	}
	parsedCache.Lock()
	if parsedCache.m == nil || parsedCache.bytes+len(raw) > maxCachedBytes {
		parsedCache.m, parsedCache.bytes = map[events.Digest]*parsed{}, 0
	}
	parsedCache.m[sum] = p
	parsedCache.bytes += len(raw)
	parsedCache.Unlock()
	return p, nil
}

func parseCassette(path string, raw []byte, refresh string) (*parsed, error) {
	if refresh == "" {
		refresh = "a new recording"
	}
	invalid := invalidFunc(path, refresh)
	c, lines, headers, err := decodeCassette(path, raw, refresh)
	if err != nil {
		return nil, err
	}
	p := &parsed{path: path, raw: raw, c: c, lines: lines, headers: headers,
		index: map[key][]int{}, raw2i: map[string][]int{}, urls: map[urlKey]string{}}
	h, scratch := newHasher(), []byte(nil)
	for i, in := range c.Interactions {
		if problem := p.add(i, in, h, &scratch); problem != "" {
			return nil, invalid(p.lines[i], "interaction %d %s", i, problem)
		}
	}
	p.digest = digestOf(c)
	return p, nil
}

// decodeCassette decodes raw, with package vcryaml when raw is in the
// YAML subset it reads (what go-vcr writes), else with yaml.v3, which
// decodes such text alike and reports what is wrong with the rest.
func decodeCassette(path string, raw []byte, refresh string) (*cassette.Cassette, []int, []headerRef, error) {
	if doc, ok := vcryaml.Decode(string(raw)); ok {
		c := cassette.New("")
		c.IsNew = false
		c.Interactions = doc.Interactions
		return c, doc.Lines, doc.Headers, nil
	}
	return decodeYAML(path, raw, refresh)
}

// invalidFunc returns a function making the ErrInvalidCassette errors of
// the cassette at path.
func invalidFunc(path, refresh string) func(line int, format string, args ...any) error {
	return func(line int, format string, args ...any) error {
		return newErr(path, line, "parse", detailf(ErrInvalidCassette,
			"%v: %s; replace it with a new recording rather than editing it by hand: %s",
			ErrInvalidCassette, fmt.Sprintf(format, args...), refresh))
	}
}

// decodeYAML decodes raw with yaml.v3, returning the cassette, the line
// of each interaction and every header and trailer value.
func decodeYAML(path string, raw []byte, refresh string) (*cassette.Cassette, []int, []headerRef, error) {
	invalid := invalidFunc(path, refresh)
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, nil, nil, invalid(lineOf(err), "%v (the file is truncated or is not YAML)", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil, nil, invalid(1, "empty file")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, nil, invalid(root.Line, "top level is not a mapping")
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
		return nil, nil, nil, newErr(path, root.Line, "parse", detailf(ErrUnsupportedVersion,
			"%v: no version field; go-vcr v3 reads format version %d", ErrUnsupportedVersion, cassette.CassetteFormatV2))
	}
	var version int
	if err := versionNode.Decode(&version); err != nil || version != cassette.CassetteFormatV2 {
		return nil, nil, nil, newErr(path, versionNode.Line, "parse", detailf(ErrUnsupportedVersion,
			"%v: version %q, want %d (go-vcr v3 format); re-record it: %s",
			ErrUnsupportedVersion, versionNode.Value, cassette.CassetteFormatV2, refresh))
	}
	c := cassette.New("")
	c.IsNew = false
	if err := root.Decode(c); err != nil {
		return nil, nil, nil, invalid(lineOf(err), "%v", err)
	}
	var lines []int
	var headers []headerRef
	if interactionsNode != nil {
		if interactionsNode.Kind != yaml.SequenceNode && !(interactionsNode.Kind == yaml.ScalarNode && interactionsNode.Tag == "!!null") {
			return nil, nil, nil, invalid(interactionsNode.Line, "interactions is not a list")
		}
		for _, n := range interactionsNode.Content {
			lines = append(lines, n.Line)
			headers = appendHeaderRefs(headers, n)
		}
	}
	if len(lines) != len(c.Interactions) {
		return nil, nil, nil, invalid(0, "decoded %d interactions from %d list items", len(c.Interactions), len(lines))
	}
	return c, lines, headers, nil
}

// add checks interaction i and indexes it for replay, hashing with h and
// canonicalizing in scratch; it returns what is wrong with it, or "".
func (p *parsed) add(i int, in *cassette.Interaction, h *hasher, scratch *[]byte) string {
	switch {
	case in == nil:
		return "is empty (the file looks truncated)"
	case in.Request.Method == "" || in.Request.URL == "":
		return "has no request method or URL (the file looks truncated)"
	case in.Response.Code == 0:
		return "has no response code (the file looks truncated)"
	}
	u, err := url.Parse(in.Request.URL)
	if err != nil {
		return "has an invalid request URL: " + err.Error()
	}
	cr := canonicalHead(in.Request.Method, u, canonicalKeys(in.Request.Headers), nil)
	p.urls[keyOf(u)] = cr.url
	p.resps = append(p.resps, newRespTemplate(&in.Response))
	if err := p.resps[i].offsetsErr; err != nil {
		return "has unusable frame offsets: " + err.Error()
	}
	cr.setBodyString(in.Request.Body, scratch)
	k := cr.keyWith(h)
	p.canon = append(p.canon, cr)
	p.keys = append(p.keys, k)
	p.index[k] = append(p.index[k], i)
	p.raw2i[in.Request.Body] = append(p.raw2i[in.Request.Body], i)
	return ""
}

// canonicalKeys returns h with canonical header names, as http.Header
// methods expect: other recorders may write them in lower case.
func canonicalKeys(h http.Header) http.Header {
	for k := range h {
		if http.CanonicalHeaderKey(k) != k {
			out := make(http.Header, len(h))
			for k, v := range h {
				ck := http.CanonicalHeaderKey(k)
				out[ck] = append(out[ck], v...)
			}
			return out
		}
	}
	return h
}

// appendHeaderRefs appends the header and trailer values of one
// interaction node (request and response) with their lines.
func appendHeaderRefs(out []headerRef, in *yaml.Node) []headerRef {
	for _, side := range mappingValues(in, "request", "response") {
		for _, hs := range mappingValues(side, "headers", "trailer") {
			if hs.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(hs.Content); i += 2 {
				name, vals := hs.Content[i], hs.Content[i+1]
				if vals.Kind == yaml.ScalarNode {
					out = append(out, headerRef{Name: name.Value, Value: vals.Value, Line: vals.Line})
				}
				for _, v := range vals.Content {
					out = append(out, headerRef{Name: name.Value, Value: v.Value, Line: v.Line})
				}
			}
		}
	}
	return out
}

// mappingValues returns the values of the given keys of mapping node n, in
// the order of keys, skipping absent ones.
func mappingValues(n *yaml.Node, keys ...string) []*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []*yaml.Node
	for _, k := range keys {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				out = append(out, n.Content[i+1])
			}
		}
	}
	return out
}
