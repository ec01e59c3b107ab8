package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecipes: the CI recipes in docs/ci give each shard its shard and
// its own results folder, keep the folder whatever the gate said, and run
// gate-merge with flags it has. (make check runs actionlint on the
// GitHub one.)
func TestRecipes(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-h"}, noEnv, &help, &help))
	tests := []struct {
		name, file string
		keep       string // what keeps the shard's folder after a failing gate
	}{
		{"github", "github-actions.yml", "if: always()"},
		{"gitlab", "gitlab-ci.yml", "when: always"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci", tt.file))
			require.NoError(t, err)
			recipe := string(b)
			for _, s := range []string{"CODEGENIE_GATE_SHARD", "CODEGENIE_GATE_RESULTS", "go test ./... -count=1", tt.keep, "CODEGENIE_LEDGER"} {
				require.Contains(t, recipe, s)
			}
			merges := regexp.MustCompile(`go run github\.com/codegenie/codegenie/cmd/gate-merge( .*)`).FindAllStringSubmatch(recipe, -1)
			require.Len(t, merges, 1, "one merge")
			for _, w := range strings.Fields(merges[0][1]) {
				if strings.HasPrefix(w, "-") {
					require.Contains(t, help.String(), "\n  "+w+" ", "gate-merge has the flag %s", w)
				}
			}
		})
	}
}
