package cassettes

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// Request headers dropped from a saved cassette: they vary with the SDK
// version, OS, architecture, Go version, attempt and signing instant
// (AWS SigV4's date and body hash, the AWS SDK's invocation ids and retry
// counters, Google's client versions), and matching ignores them.
var volatileRequestHeaders = []string{
	"User-Agent", "Idempotency-Key", "X-Stainless-",
	"X-Amz-Date", "X-Amz-Content-Sha256", "X-Amz-User-Agent", "Amz-Sdk-Invocation-Id", "Amz-Sdk-Request",
	"X-Goog-Api-Client",
}

// Headers whose values are replaced by redacted in a saved cassette, on the
// request and on the response.
var redactedHeaders = []string{
	"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie", "Set-Cookie",
	"X-Goog-Api-Key", "X-Amz-Security-Token",
	"Request-Id", "X-Request-Id", "Anthropic-Organization-Id", "Openai-Organization",
	"Traceparent", "Tracestate", "X-Amzn-Trace-Id", "X-Cloud-Trace-Context", "Cf-Ray", "X-B3-Traceid", "X-B3-Spanid",
}

// normalizedDate replaces Date (and any rate-limit reset instant).
const normalizedDate = "Thu, 01 Jan 1970 00:00:00 GMT"

func isRateLimit(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "anthropic-ratelimit-") || strings.HasPrefix(n, "x-ratelimit-")
}

func isVolatileRequest(name string) bool {
	for _, v := range volatileRequestHeaders {
		if strings.HasSuffix(v, "-") {
			if strings.HasPrefix(http.CanonicalHeaderKey(name), v) {
				return true
			}
		} else if http.CanonicalHeaderKey(name) == v {
			return true
		}
	}
	return false
}

func cloneValues[M ~map[string][]string](m M) M {
	if m == nil {
		return nil
	}
	out := make(M, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// copyInteraction deep-copies everything mutable in i.
func copyInteraction(i *cassette.Interaction) *cassette.Interaction {
	c := &cassette.Interaction{ID: i.ID, Request: i.Request, Response: i.Response}
	c.Request.Headers = cloneValues(i.Request.Headers)
	c.Request.Trailer = cloneValues(i.Request.Trailer)
	c.Request.Form = cloneValues(i.Request.Form)
	c.Request.TransferEncoding = slices.Clone(i.Request.TransferEncoding)
	c.Response.Headers = cloneValues(i.Response.Headers)
	c.Response.Trailer = cloneValues(i.Response.Trailer)
	c.Response.TransferEncoding = slices.Clone(i.Response.TransferEncoding)
	return c
}

// redactInteraction returns the copy of i that is saved: credentials and
// request/trace ids redacted, volatile request headers dropped, Date and
// rate-limit headers normalised, user info and credential query parameters
// removed from the URL, and the recorded duration rounded to the
// millisecond. i is not modified.
func redactInteraction(i *cassette.Interaction) *cassette.Interaction {
	c := copyInteraction(i)
	c.Request.URL = redactURL(c.Request.URL)
	redactQuery(c.Request.Form)
	for name := range c.Request.Headers {
		if isVolatileRequest(name) {
			delete(c.Request.Headers, name)
		}
	}
	for _, h := range []http.Header{c.Request.Headers, c.Response.Headers, c.Request.Trailer, c.Response.Trailer} {
		for _, name := range slices.Sorted(maps.Keys(h)) {
			canon := http.CanonicalHeaderKey(name)
			switch {
			case slices.Contains(redactedHeaders, canon):
				h[name] = []string{redacted}
			case canon == "Date":
				h[name] = []string{normalizedDate}
			case isRateLimit(canon):
				if strings.HasSuffix(canon, "-Reset") {
					h[name] = []string{"1970-01-01T00:00:00Z"}
				} else {
					h[name] = []string{"0"}
				}
			}
		}
	}
	c.Response.Duration = c.Response.Duration.Round(durationGrain)
	return c
}

// durationGrain is the precision a recorded response duration is saved
// with: fine enough for the timeouts and elapsed-time caps production
// meets (seconds), coarse enough that re-recording an unchanged pipeline
// against a local fake, which answers in a few milliseconds, writes the
// same bytes.
const durationGrain = 100 * time.Millisecond
