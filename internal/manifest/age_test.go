package manifest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseAge(t *testing.T) {
	const day = 24 * time.Hour
	for in, want := range map[string]time.Duration{"30d": 30 * day, "720h": 30 * day, "90m": 90 * time.Minute} {
		got, err := ParseAge(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "0d", "-1h", "3w", "d", "1e9d"} {
		_, err := ParseAge(in)
		require.Error(t, err, in)
	}
}
