package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLinksNoSDKAndNoPipeline: the command is a thin main over package
// cassettes/refresh; it links no LLM SDK and none of the sample
// pipeline's packages (a team's module runs it against its own).
func TestLinksNoSDKAndNoPipeline(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/codegenie/codegenie/cassettes/refresh")
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/anthropics", "github.com/openai", "google.golang.org/genai", "github.com/aws/aws-sdk-go-v2", "github.com/ollama/ollama",
			"github.com/codegenie/codegenie/rag", "github.com/codegenie/codegenie/prompt", "github.com/codegenie/codegenie/llm",
			"github.com/codegenie/codegenie/fallback", "github.com/codegenie/codegenie/fixtures", "github.com/codegenie/codegenie/properties",
		} {
			require.False(t, d == banned || strings.HasPrefix(d, banned+"/"), "refresh-cassettes links %s", d)
		}
	}
}
