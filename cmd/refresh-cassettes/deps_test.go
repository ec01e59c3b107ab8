package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/cmdtest"
)

// TestLinksNoSDKAndNoPipeline: the command is a thin main over package
// cassettes/refresh; it links no LLM SDK and none of the sample
// pipeline's packages (a team's module runs it against its own).
func TestLinksNoSDKAndNoPipeline(t *testing.T) {
	require.Contains(t, cmdtest.Deps(t, "."), "github.com/codegenie/codegenie/cassettes/refresh")
	cmdtest.RequireNoDeps(t, ".",
		"github.com/anthropics", "github.com/openai", "google.golang.org/genai", "github.com/aws/aws-sdk-go-v2", "github.com/ollama/ollama",
		"github.com/codegenie/codegenie/rag", "github.com/codegenie/codegenie/prompt", "github.com/codegenie/codegenie/llm",
		"github.com/codegenie/codegenie/fallback", "github.com/codegenie/codegenie/fixtures", "github.com/codegenie/codegenie/properties",
	)
}
