package cassettes

import (
	"net/http"
	"testing"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
)

// Headers a cassette spells in two cases are read in name order, the same
// in every process, not in the order a map yields them.
func TestHeaderSpellingsReadInNameOrder(t *testing.T) {
	const tries = 50
	lanes := map[string]bool{}
	canon := map[string]bool{}
	codings := map[string]bool{}
	for range tries {
		lanes[recordedLane(http.Header{"Codegenie-Lane": {"a"}, "codegenie-lane": {"b"}})] = true
		canon[pretty.Sprint(canonicalKeys(http.Header{"Content-Type": {"x"}, "content-type": {"y"}}))] = true
		codings[pretty.Sprint(contentCodings(http.Header{"Content-Encoding": {"gzip"}, "content-encoding": {"br"}}))] = true
	}
	require.Equal(t, map[string]bool{"a": true}, lanes)
	require.Equal(t, map[string]bool{pretty.Sprint(http.Header{"Content-Type": {"x", "y"}}): true}, canon)
	require.Equal(t, map[string]bool{pretty.Sprint([]string{"gzip", "br"}): true}, codings)
}
