package cmdtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pipelineAndSDKs are the import paths no command may link (a path and
// everything under it): the LLM SDKs and the packages of the sample
// pipeline. A team runs the commands against its own module, and what a
// bundle, a ledger or a result file names is never the sample's.
var pipelineAndSDKs = []string{
	"github.com/anthropics", "github.com/openai", "google.golang.org/genai", "github.com/aws/aws-sdk-go-v2", "github.com/ollama/ollama",
	"github.com/codegenie/codegenie/rag", "github.com/codegenie/codegenie/prompt", "github.com/codegenie/codegenie/llm",
	"github.com/codegenie/codegenie/fallback", "github.com/codegenie/codegenie/fixtures", "github.com/codegenie/codegenie/properties",
}

// TestCommandsLinkNoPipeline: every command is a thin main over the
// library it names, and links no LLM SDK and no package of the sample
// pipeline (go list -deps; test files are not linked into a command).
func TestCommandsLinkNoPipeline(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, library string }{
		{"bundle", "bundle"},
		{"gate-merge", "gate"},
		{"refresh-cassettes", "cassettes/refresh"},
		{"ledger", "ledger"},
		{"detvet", "detvet"},
	}
	require.Len(t, tests, len(commands), "every command is listed here")
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/codegenie/codegenie/cmd/...").Output()
	require.NoError(t, err)
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[strings.TrimPrefix(f[0], "github.com/codegenie/codegenie/cmd/")] = f[1:]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := deps[tt.name]
			require.True(t, ok, "go list lists cmd/%s", tt.name)
			require.Contains(t, got, "github.com/codegenie/codegenie/"+tt.library)
			for _, d := range got {
				for _, banned := range pipelineAndSDKs {
					require.False(t, d == banned || strings.HasPrefix(d, banned+"/"), "cmd/%s links %s", tt.name, d)
				}
			}
		})
	}
}
