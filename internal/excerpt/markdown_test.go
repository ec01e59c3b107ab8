package excerpt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarkdownCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "gate-0/x.bundle.zst", "`gate-0/x.bundle.zst`"},
		{"backtick-inside", "a`b", "``a`b``"},
		{"run-inside", "a```b", "````a```b````"},
		{"backtick-edge", "`a", "`` `a ``"},
		{"newline", "a\nb", "`a b`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, MarkdownCode(tt.in))
		})
	}
}

func TestMarkdownFence(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, lang, want string }{
		{"plain", "a\nb\n", "text", "```text\na\nb\n```\n"},
		{"fence-inside", "x\n```\n# heading\n", "", "````\nx\n```\n# heading\n````\n"},
		{"long-run", "``````", "sh", "```````sh\n``````\n```````\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, MarkdownFence(tt.in, tt.lang))
		})
	}
}
