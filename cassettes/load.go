package cassettes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"

	"github.com/codegenie/codegenie/events"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// parsed is a cassette file decoded, checked and indexed for replay. It is
// shared by every Open of the same content and never modified but for
// checked, which caches findings under its own lock.
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
	digest  events.Digest    // cassette_id: of the decoded content
	sum     events.Digest    // blake3 of raw: of the text
	decoded map[int]string   // body b (see bodyAt) decoded from its Content-Encoding
	budget  int64            // what decoding request bodies for matching may still make
	checked checked          // the secret checks' findings, made once
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

// readCassette reads and validates path. refresh is the command named when
// the file is missing.
func readCassette(path, refresh string) (*parsed, error) {
	raw, err := readCassetteFile(path)
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
	if p, err = parseSummed(path, raw, sum, refresh); err != nil {
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

// readCassetteFile reads the regular file at path, refusing from its size,
// before reading a byte, a file larger than maxCassetteBytes.
func readCassetteFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() > maxCassetteBytes {
		return nil, fmt.Errorf("%d bytes, larger than %d bytes, the most this package reads", fi.Size(), maxCassetteBytes)
	}
	b, err := readAllInto(io.LimitReader(f, maxCassetteBytes+1), make([]byte, 0, fi.Size()+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCassetteBytes {
		return nil, fmt.Errorf("larger than %d bytes, the most this package reads", maxCassetteBytes)
	}
	return b, nil
}

// parseCassette decodes, checks and indexes the cassette text raw read
// from path; refresh is the command its errors name to record it again.
func parseCassette(path string, raw []byte, refresh string) (*parsed, error) {
	return parseSummed(path, raw, events.Sum(raw), refresh)
}

// parseSummed is parseCassette for a text whose blake3 is sum.
func parseSummed(path string, raw []byte, sum events.Digest, refresh string) (*parsed, error) {
	if refresh == "" {
		refresh = "a new recording"
	}
	invalid := invalidFunc(path, refresh)
	c, lines, err := decodeCassette(path, raw, refresh)
	if err != nil {
		return nil, err
	}
	p := &parsed{path: path, raw: raw, c: c, lines: lines, sum: sum,
		index: map[key][]int{}, raw2i: map[string][]int{}, urls: map[urlKey]string{}, budget: maxDecodedBytes}
	h, scratch := newHasher(), []byte(nil)
	for i, in := range c.Interactions {
		if problem := p.add(i, in, h, &scratch); problem != "" {
			return nil, invalid(p.lines[i], "interaction %d %s", i, problem)
		}
	}
	if b, err := p.decodeBodies(); err != nil {
		return nil, invalid(p.lines[b/2], "interaction %d: %v", b/2, err)
	}
	p.digest = digestOf(c)
	return p, nil
}

// invalidFunc returns a function making the errInvalidCassette errors of
// the cassette at path.
func invalidFunc(path, refresh string) func(line int, format string, args ...any) error {
	return func(line int, format string, args ...any) error {
		return newErr(path, line, "parse", detailf(errInvalidCassette,
			"%v: %s; replace it with a new recording rather than editing it by hand: %s",
			errInvalidCassette, fmt.Sprintf(format, args...), refresh))
	}
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
	if err := p.resps[i].err; err != nil {
		return "has " + err.Error()
	}
	cr.setBodyString(in.Request.Body, scratch, &p.budget)
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
			for _, k := range slices.Sorted(maps.Keys(h)) {
				ck := http.CanonicalHeaderKey(k)
				out[ck] = append(out[ck], h[k]...)
			}
			return out
		}
	}
	return h
}
