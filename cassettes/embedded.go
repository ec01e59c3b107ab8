package cassettes

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/internal/eventstream"
)

// A body's format may carry content encoded inside it, as base64 text a
// client decodes: the payload of each message of an AWS event stream
// that is {"bytes": "<base64>"} (Bedrock's InvokeModelWithResponseStream
// chunks, the model's output itself), and each part of a multipart body
// with a Content-Transfer-Encoding of base64 (or quoted-printable). The
// secret checks read that content decoded, as part of what the cassette
// means, within the budget of what decoding a cassette's bodies may make.

// errEmbeddedBudget: the content a cassette's bodies carry encoded
// decodes past what the secret checks decode.
var errEmbeddedBudget = fmt.Errorf("base64 content (event-stream bytes members, multipart parts) decoding past the %d bytes the secret checks decode for a cassette, so it cannot be checked for secrets", maxDecodedBytes)

// maxMultipartDepth bounds the multipart bodies nested in parts that are
// read for content.
const maxMultipartDepth = 4

// embedded calls yield with each piece of content that body, a body with
// headers h as a client reads it (decoded from its Content-Encoding),
// carries encoded, decoded, charging what decoding makes to budget. It
// returns whether yield never returned false, or errEmbeddedBudget.
// Content that does not decode is not yielded: its text is the body's.
func embedded(body string, h http.Header, budget *int64, yield func(string) bool) (bool, error) {
	mt, params, err := mime.ParseMediaType(canonicalKeys(h).Get("Content-Type"))
	if err != nil {
		return true, nil
	}
	switch {
	case mt == "application/vnd.amazon.eventstream":
		return eventStreamBytes(body, budget, yield)
	case strings.HasPrefix(mt, "multipart/") && params["boundary"] != "":
		return multipartContent(body, params["boundary"], 0, budget, yield)
	}
	return true, nil
}

// eventStreamBytes yields the decoded "bytes" member of each message
// payload of the AWS event stream s that is a JSON object holding one.
func eventStreamBytes(s string, budget *int64, yield func(string) bool) (bool, error) {
	for msg := range framingEventStream.frames(s) {
		m, err := eventstream.Decode(msg)
		if err != nil || !strings.HasPrefix(strings.TrimLeft(m.Payload, " \t\r\n"), "{") {
			continue
		}
		var p struct {
			Bytes *string `json:"bytes"`
		}
		if json.Unmarshal([]byte(m.Payload), &p) != nil || p.Bytes == nil {
			continue
		}
		if !charge(budget, base64.StdEncoding.DecodedLen(len(*p.Bytes))) {
			return false, errEmbeddedBudget
		}
		d, err := base64.StdEncoding.DecodeString(*p.Bytes)
		if err != nil {
			continue
		}
		if !yield(string(d)) {
			return false, nil
		}
	}
	return true, nil
}

// multipartContent yields the decoded content of each part of the
// multipart body s with a base64 or quoted-printable
// Content-Transfer-Encoding, and, depth levels down at most, of the
// parts of the multipart bodies its parts are.
func multipartContent(s, boundary string, depth int, budget *int64, yield func(string) bool) (bool, error) {
	r := multipart.NewReader(strings.NewReader(s), boundary)
	for n := 0; n < maxParts; n++ {
		part, err := r.NextRawPart()
		if err != nil {
			return true, nil // the end, or not multipart after all
		}
		raw, err := io.ReadAll(part)
		if err != nil {
			return true, nil
		}
		content := string(raw)
		switch strings.ToLower(strings.TrimSpace(part.Header.Get("Content-Transfer-Encoding"))) {
		case "base64":
			if !charge(budget, base64.StdEncoding.DecodedLen(len(raw))) {
				return false, errEmbeddedBudget
			}
			d, err := base64.StdEncoding.DecodeString(content) // ignores line ends
			if err != nil {
				continue
			}
			content = string(d)
		case "quoted-printable":
			if !charge(budget, len(raw)) {
				return false, errEmbeddedBudget
			}
			d, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(content)))
			if err != nil {
				continue
			}
			content = string(d)
		default:
			content = ""
		}
		if content != "" && !yield(content) {
			return false, nil
		}
		mt, params, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" && depth+1 < maxMultipartDepth {
			if content == "" {
				content = string(raw)
			}
			if more, err := multipartContent(content, params["boundary"], depth+1, budget, yield); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// charge takes n bytes from budget, reporting whether it had them.
func charge(budget *int64, n int) bool {
	if int64(n) > *budget {
		return false
	}
	*budget -= int64(n)
	return true
}

// meaning calls yield with every string of interaction i's meaning: its
// fields, then the content its bodies carry encoded (see embedded), with
// the body as src, charging what that decoding makes to budget. It stops
// when yield returns false. On errEmbeddedBudget it returns the body
// whose content passed the budget.
func (p *parsed) meaning(i int, budget *int64, yield func(field) bool) (string, error) {
	if !p.fields(i, yield) {
		return "", nil
	}
	in := p.c.Interactions[i]
	for b := 2 * i; b < 2*i+2; b++ {
		body, h := bodyAt(in, b)
		text := body
		if d, ok := p.decoded[b]; ok {
			text = d
		}
		more, err := embedded(text, h, budget, func(s string) bool { return yield(field{i: i, value: s, src: body}) })
		if errors.Is(err, errEmbeddedBudget) {
			return body, err
		}
		if !more {
			return "", nil
		}
	}
	return "", nil
}

// embeddedBudget is what decoding a cassette's embedded content may
// make: what decoding its bodies from their Content-Encoding left of
// maxDecodedBytes.
func (p *parsed) embeddedBudget() int64 {
	n := int64(maxDecodedBytes)
	for _, d := range p.decoded {
		n -= int64(len(d))
	}
	return max(n, 0)
}
