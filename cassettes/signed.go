package cassettes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// bodyHashHeader carries the hex SHA-256 of the body an AWS SigV4 request
// signed. It is dropped from saved cassettes and ignored by matching; a
// replayed request's own value is checked against the body it sends.
const bodyHashHeader = "X-Amz-Content-Sha256"

// checkBodyHash returns an error when a request declares the SHA-256 of
// its body and the body it sends has another; a declared payload kind
// (UNSIGNED-PAYLOAD, STREAMING-...) is not a hash and is not checked.
func checkBodyHash(h http.Header, body []byte) error {
	v := strings.TrimSpace(h.Get(bodyHashHeader))
	if len(v) != sha256.Size*2 {
		return nil
	}
	want, err := hex.DecodeString(v)
	if err != nil {
		return nil
	}
	got := sha256.Sum256(body)
	if string(want) != string(got[:]) {
		return fmt.Errorf("the request's %s header is %s, but its body's SHA-256 is %x: the request was changed after it was signed",
			bodyHashHeader, v, got)
	}
	return nil
}
