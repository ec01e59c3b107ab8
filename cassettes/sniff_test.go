package cassettes

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSniffMedia(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"json object", `{"id":"msg_1","content":[]}`, mediaJSON},
		{"json array (a Gemini stream)", "[{\"candidates\":[]}\n,\r\n{\"candidates\":[]}]", mediaJSON},
		{"sse with events", "event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n", mediaSSE},
		{"sse data only", "data: {\"x\":1}\n\ndata: [DONE]\n\n", mediaSSE},
		{"sse comment first", ": ping\n\ndata: {}\n\n", mediaSSE},
		{"ndjson", "{\"done\":false}\n{\"done\":true}\n", mediaNDJSON},
		{"one json line is json", "{\"done\":true}\n", mediaJSON},
		{"plain text", "Internal Server Error", ""},
		{"broken json", `{"id":`, ""},
		{"text with a colon", "note: something\n", ""},
		{"empty", "  \n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sniffMedia(tc.body))
		})
	}
}

func TestInferredNotesAreSortedAndCounted(t *testing.T) {
	resps := []respTemplate{{inferred: mediaSSE}, {}, {inferred: mediaJSON}, {inferred: mediaJSON}}
	require.Equal(t, []string{"cassettes: x.yaml: 3 responses recorded without a Content-Type are served as their bodies evidently are: application/json (2), text/event-stream (1)"},
		inferredNotes("x.yaml", resps))
	require.Nil(t, inferredNotes("x.yaml", []respTemplate{{}}))
}
