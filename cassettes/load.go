package cassettes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"

	"github.com/codegenie/codegenie/events"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// parsed is a cassette file decoded and checked, with what matching and
// error messages need precomputed.
type parsed struct {
	path    string
	raw     []byte
	c       *cassette.Cassette
	lines   []int // 1-based line of each interaction
	canon   []*canonRequest
	keys    []key
	digest  events.Digest
	headers []headerRef // every header and trailer value, for the secret scan
}

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
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, newErr(path, 0, "open", detailf(ErrCassetteNotFound,
			"%v: the file does not exist; record it with: %s", ErrCassetteNotFound, refresh))
	}
	if err != nil {
		return nil, newErr(path, 0, "open", err)
	}
	return parseCassette(path, raw)
}

func parseCassette(path string, raw []byte) (*parsed, error) {
	invalid := func(line int, format string, args ...any) error {
		return newErr(path, line, "parse", detailf(ErrInvalidCassette,
			"%v: %s; re-record it with refresh-cassettes rather than editing it by hand",
			ErrInvalidCassette, fmt.Sprintf(format, args...)))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, invalid(lineOf(err), "%v (the file is truncated or is not YAML)", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, invalid(1, "empty file")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, invalid(root.Line, "top level is not a mapping")
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
		return nil, newErr(path, root.Line, "parse", detailf(ErrUnsupportedVersion,
			"%v: no version field; go-vcr v3 reads format version %d", ErrUnsupportedVersion, cassette.CassetteFormatV2))
	}
	var version int
	if err := versionNode.Decode(&version); err != nil || version != cassette.CassetteFormatV2 {
		return nil, newErr(path, versionNode.Line, "parse", detailf(ErrUnsupportedVersion,
			"%v: version %q, want %d (go-vcr v3 format); re-record it with refresh-cassettes",
			ErrUnsupportedVersion, versionNode.Value, cassette.CassetteFormatV2))
	}
	c := cassette.New("")
	c.IsNew = false
	if err := root.Decode(c); err != nil {
		return nil, invalid(lineOf(err), "%v", err)
	}
	p := &parsed{path: path, raw: raw, c: c}
	if interactionsNode != nil {
		if interactionsNode.Kind != yaml.SequenceNode && !(interactionsNode.Kind == yaml.ScalarNode && interactionsNode.Tag == "!!null") {
			return nil, invalid(interactionsNode.Line, "interactions is not a list")
		}
		for _, n := range interactionsNode.Content {
			p.lines = append(p.lines, n.Line)
			p.headers = appendHeaderRefs(p.headers, n)
		}
	}
	if len(p.lines) != len(c.Interactions) {
		return nil, invalid(0, "decoded %d interactions from %d list items", len(c.Interactions), len(p.lines))
	}
	for i, in := range c.Interactions {
		if in == nil {
			return nil, invalid(p.lines[i], "interaction %d is empty (the file looks truncated)", i)
		}
		if in.Request.Method == "" || in.Request.URL == "" {
			return nil, invalid(p.lines[i], "interaction %d has no request method or URL (the file looks truncated)", i)
		}
		if in.Response.Code == 0 {
			return nil, invalid(p.lines[i], "interaction %d has no response code (the file looks truncated)", i)
		}
		cr, err := canonicalize(in.Request.Method, in.Request.URL, in.Request.Headers, []byte(in.Request.Body))
		if err != nil {
			return nil, invalid(p.lines[i], "interaction %d: request URL: %v", i, err)
		}
		p.canon = append(p.canon, cr)
		p.keys = append(p.keys, cr.key())
	}
	d, err := digestOf(c)
	if err != nil {
		return nil, invalid(0, "digest: %v", err)
	}
	p.digest = d
	return p, nil
}

// digestRequest and digestResponse are the projections the cassette digest
// covers: every go-vcr field, with each body replaced by its blake3 digest.
type digestRequest struct {
	cassette.Request
	BodyDigest events.Digest
}

type digestResponse struct {
	cassette.Response
	BodyDigest events.Digest
}

type digestInteraction struct {
	ID       int
	Request  digestRequest
	Response digestResponse
}

type digestCassette struct {
	Version      int
	Interactions []digestInteraction
}

// digestOf computes cassette_id as specified in doc.go.
func digestOf(c *cassette.Cassette) (events.Digest, error) {
	d := digestCassette{Version: c.Version, Interactions: make([]digestInteraction, 0, len(c.Interactions))}
	for _, in := range c.Interactions {
		req, resp := in.Request, in.Response
		req.Body, resp.Body = "", ""
		d.Interactions = append(d.Interactions, digestInteraction{
			ID:       in.ID,
			Request:  digestRequest{Request: req, BodyDigest: events.Sum([]byte(in.Request.Body))},
			Response: digestResponse{Response: resp, BodyDigest: events.Sum([]byte(in.Response.Body))},
		})
	}
	b, err := events.Canonical(d)
	if err != nil {
		return events.Digest{}, err
	}
	return events.Sum(b), nil
}

// Digest returns the cassette_id of the cassette file at path: the
// blake3-256 digest (hex) of its canonical content, as specified in the
// package documentation. It does not consult the manifest.
func Digest(path string) (string, error) {
	p, err := readCassette(path, refreshCommand(""))
	if err != nil {
		return "", err
	}
	return p.digest.String(), nil
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
					out = append(out, headerRef{name: name.Value, value: vals.Value, line: vals.Line})
				}
				for _, v := range vals.Content {
					out = append(out, headerRef{name: name.Value, value: v.Value, line: v.Line})
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
