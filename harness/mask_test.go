package harness

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/gate"
)

// TestURLKeyNeverLeaves: a miss on a URL with a Gemini-style ?key= comes
// back from http.Client.Do as a *url.Error holding the whole URL; no
// byte of the key reaches the report, its JSON, the bundle or the result
// file, in the test process or from a child process.
func TestURLKeyNeverLeaves(t *testing.T) {
	t.Parallel()
	const key = "AIzaSyD3kP9xQ2mN7vL4tR8wZ1cB6hJ0fG5sE2a"
	dir := t.TempDir()
	rep := Config{Iterations: 6, Floor: 5, Processes: 2, ArtifactDir: dir}.check(t, "url-key", func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(echoCassette)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://generativelanguage.example.test/v1/models?key="+key, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}, false)
	require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
	require.Equal(t, 2, len(rep.ClassProcesses(0)))
	res, err := rep.Result().Save(t.TempDir())
	require.NoError(t, err)
	texts := map[string]string{"report": rep.String(), "error": rep.Err().Error()}
	for _, p := range []string{res, filepath.Join(dir, "url-key", "report.json"), filepath.Join(dir, "url-key", "report.txt")} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		texts[p] = string(b)
	}
	b, err := bundle.Config{}.Load(t.Context(), filepath.Join(dir, "url-key", "url-key"+bundle.FileExt))
	require.NoError(t, err)
	for _, r := range b.Runs {
		texts["bundle "+r.ID] = r.Error
	}
	require.Contains(t, texts["report"], "generativelanguage.example.test", "the URL is still named")
	for name, text := range texts {
		for _, part := range []string{key, key[4:16], key[20:]} {
			require.False(t, strings.Contains(text, part), "%s holds %q:\n%s", name, part, text)
		}
	}
}
