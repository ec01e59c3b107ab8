package cassettes

import (
	"github.com/codegenie/codegenie/events"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

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
	p, err := readCassette(path, "")
	if err != nil {
		return "", err
	}
	return p.digest.String(), nil
}
