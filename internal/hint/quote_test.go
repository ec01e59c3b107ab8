package hint

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "plain", in: "./properties", want: "./properties"},
		{name: "empty", in: "", want: "''"},
		{name: "space", in: "a b", want: "'a b'"},
		{name: "regexp", in: "^TestX$/^a$", want: "'^TestX$/^a$'"},
		{name: "single quote", in: "it's", want: `'it'\''s'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Quote(tt.in))
		})
	}
}

// TestQuoteRoundTripsThroughSh runs the quoted words through a real shell.
func TestQuoteRoundTripsThroughSh(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	words := []string{"plain", "a b", "it's", `$HOME`, "`x`", "*", "\\n", "é", ""}
	for _, w := range words {
		out, err := exec.Command(sh, "-c", "printf %s "+Quote(w)).Output()
		require.NoError(t, err)
		require.Equal(t, w, string(out))
	}
	require.Equal(t, "'a b' c", Join([]string{"a b", "c"}))
}
