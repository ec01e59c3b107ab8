package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/ledger"
)

// TestVerifyReportIsBounded: a ledger of junk keeps at most MaxReported
// problems, warnings and schema versions, each message at most
// MaxMessageBytes, and counts the rest; the text and the error stay short.
func TestVerifyReportIsBounded(t *testing.T) {
	t.Parallel()
	const junk = 3 * ledger.MaxReported
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"schema\":1,\"seq\":1,\"kind\":\"verdict\",\"scenario\":\"s\",\"verdict\":%q}\n", strings.Repeat("V", 100<<10))
	for i := range junk {
		fmt.Fprintf(&b, "{\"schema\":%d,\"seq\":%d}\n", i+3, i+2) // each an unknown schema: a warning and problems
	}
	b.WriteString(strings.Repeat("x", ledgerdb.MaxEntryBytes+10) + "\n")
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	s := open(t, path, &clock{})
	rep, err := s.Verify(context.Background())
	require.NoError(t, err)

	require.Equal(t, junk+2, rep.Entries)
	require.Len(t, rep.Problems, ledger.MaxReported)
	require.Greater(t, rep.MoreProblems, 0)
	require.Len(t, rep.Warnings, ledger.MaxReported)
	require.Equal(t, junk+1-ledger.MaxReported, rep.MoreWarnings) // one per unknown schema, and the mixed-versions one
	require.Len(t, rep.Schemas, ledger.MaxReported)
	require.Equal(t, junk+1-ledger.MaxReported, rep.OtherSchemas)
	for _, p := range append(rep.Problems, rep.Warnings...) {
		require.LessOrEqual(t, len(p.Message), ledger.MaxMessageBytes)
	}
	require.True(t, slices.ContainsFunc(rep.Problems, func(p ledger.Problem) bool { return strings.HasSuffix(p.Message, "... (cut)") }))
	var text bytes.Buffer
	require.NoError(t, rep.Text(&text))
	require.Less(t, text.Len(), 64<<10)
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	require.Less(t, len(js), 64<<10)
	require.Less(t, len(rep.Err().Error()), 200)
	require.Contains(t, text.String(), fmt.Sprintf("and %d more problems", rep.MoreProblems))
}
