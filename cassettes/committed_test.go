package cassettes_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

// TestCommittedCassettesReplay replays every committed cassette through the
// fixture tier inside a synctest bubble (so nothing can reach a socket) and
// requires the DiffBytes a direct run against fakellm gives.
func TestCommittedCassettesReplay(t *testing.T) {
	require.NoError(t, cassettes.Verify("testdata", cassettes.VerifyConfig{}))
	m, err := manifest.Read(filepath.Join("testdata", manifest.Name))
	require.NoError(t, err)
	require.NotEmpty(t, m.Cassettes)
	for _, e := range m.Cassettes {
		t.Run(e.File, func(t *testing.T) {
			name, path, ok := strings.Cut(strings.TrimSuffix(e.File, ".yaml"), ".")
			require.True(t, ok)
			s, ok := fixtures.Lookup(name)
			require.True(t, ok, "no fixture scenario %q", name)
			prior := s.Prior
			if path == "happy" {
				prior = nil
			}
			direct, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
			require.NoError(t, err)
			want, err := direct.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, prior)
			require.NoError(t, err)

			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(filepath.Join("testdata", e.File), cassettes.Config{})
				require.NoError(t, err)
				tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: c.Client()})
				require.NoError(t, err)
				got, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, prior)
				require.NoError(t, err)
				require.NoError(t, c.Close())
				require.Equal(t, e.Digest, got.RunKey.CassetteID)
				require.Equal(t, string(want.Transform.DiffBytes), string(got.Transform.DiffBytes))
			})
		})
	}
}
