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

func TestFormatAge(t *testing.T) {
	const day = 24 * time.Hour
	require.Equal(t, "30d", FormatAge(30*day+time.Hour))
	require.Equal(t, "1h0m0s", FormatAge(time.Hour))
	require.Equal(t, "1d 1h30m0s", FormatAge(36*time.Hour)+" "+FormatAge(90*time.Minute))
}

func TestStalenessString(t *testing.T) {
	s := Staleness{Path: "testdata/demo.yaml", RecordedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Age: 45 * 24 * time.Hour, MaxAge: 30 * 24 * time.Hour, Command: "refresh-cassettes -expired"}
	require.Equal(t, "testdata/demo.yaml: recorded 2026-01-01T00:00:00Z, 45d ago, past its maximum age of 30d; re-record it with: refresh-cassettes -expired", s.String())
}
