package gateflags

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShardOfIsStable: a scenario's shard is FNV-1a of its name modulo n,
// the same on every machine and in every release, so the shards of one CI
// matrix never disagree.
func TestShardOfIsStable(t *testing.T) {
	for name, want := range map[string]int{"npm-lodash/happy": 1, "npm-lodash/retry": 1, "go-xnet/happy": 0} {
		require.Equal(t, want, Of(name, 4), name)
	}
}

// TestParseShard: a shard is i/n with 0 <= i < n, or "" for all; it skips
// exactly the scenarios of the other shards.
func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Shard
		bad      bool
	}{
		{"all", "", Shard{}, false},
		{"first", "0/4", Shard{0, 4}, false},
		{"last", "3/4", Shard{3, 4}, false},
		{"past the end", "4/4", Shard{}, true},
		{"no shards", "0/0", Shard{}, true},
		{"negative", "-1/4", Shard{}, true},
		{"junk", "a/b", Shard{}, true},
		{"no slash", "3", Shard{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.bad {
				require.ErrorIs(t, err, ErrBadShard)
				require.ErrorContains(t, err, "want i/n with 0 <= i < n")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.in, got.String())
		})
	}
	s := Shard{1, 4}
	require.Empty(t, s.Skip("npm-lodash/happy"))
	require.Equal(t, "scenario belongs to shard 0/4; this is shard 1/4", s.Skip("go-xnet/happy"))
	require.Empty(t, Shard{}.Skip("go-xnet/happy"))
}
