package cassettes_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

func TestMask(t *testing.T) {
	const key = "test-key-q8wE3rT6 y/U1+iO9"
	tests := []struct {
		name, text string
		secrets    []string // no byte sequence of these may remain
		keep       string   // text that must survive
	}{
		{"key as written", "failed with " + key + " here", []string{key}, "failed with "},
		{"key query-escaped", "GET https://h/p?x=" + url.QueryEscape(key), []string{url.QueryEscape(key)}, "https://h/p?x="},
		{"key path-escaped", "GET https://h/" + url.PathEscape(key) + "/x", []string{url.PathEscape(key)}, "/x"},
		{"Gemini key in a query", `Post "https://generativelanguage.googleapis.com/v1/models:generate?alt=sse&key=AIzaSyQ8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8c": dial tcp`,
			[]string{"AIzaSyQ8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8c"}, "alt=sse&key=REDACTED"},
		{"opaque access token in a query", "GET https://h/p?access_token=opaque0123456789&b=2", []string{"opaque0123456789"}, "access_token=REDACTED&b=2"},
		{"signature in a query", "GET https://h/p?X-Amz-Signature=0a1b2c3d4e5f6a7b8c9d", []string{"0a1b2c3d4e5f6a7b8c9d"}, "X-Amz-Signature=REDACTED"},
		{"bearer token", "Authorization: Bearer Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL\n", []string{"Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL"}, "Authorization: Bearer "},
		{"placeholder kept", "GET https://h/p?key=REDACTED&page=2", nil, "GET https://h/p?key=REDACTED&page=2"},
		{"short query value kept", "GET https://h/p?token=abc", nil, "?token=abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cassettes.Mask(tt.text, key)
			for _, s := range tt.secrets {
				require.NotContains(t, got, s)
			}
			require.Contains(t, got, tt.keep)
			require.Equal(t, got, cassettes.Mask(got, key), "masking twice")
		})
	}
}

func TestMaskURLError(t *testing.T) {
	const key = "AIzaSyQ8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8c"
	_, err := (&http.Client{Transport: failing{}}).Get("https://example.invalid/v1?key=" + key)
	require.Error(t, err)
	require.Contains(t, err.Error(), key, "the url.Error holds the key")
	got := cassettes.Mask(err.Error())
	require.NotContains(t, got, key)
	require.NotContains(t, got, key[4:20])
	require.True(t, strings.Contains(got, "key=REDACTED"), "%s", got)
}

type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, errors.New("no network") }

func ExampleMask() {
	err := `Get "https://generativelanguage.googleapis.com/v1/models?key=AIzaSyQ8wE3rT6yU1iO9pA4sD7fG2hJ5kL0zX8c": no route`
	fmt.Println(cassettes.Mask(err))
	fmt.Println(cassettes.Mask("request failed for my-recording-key", "my-recording-key"))
	// Output:
	// Get "https://generativelanguage.googleapis.com/v1/models?key=REDACTED": no route
	// request failed for REDACTED
}
