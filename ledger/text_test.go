package ledger_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/pgtest"
	"github.com/codegenie/codegenie/ledger"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// TestStoresKeepTheSameText: entries whose strings hold NUL or bytes that
// are not UTF-8 are appended by both stores, each such byte replaced by
// U+FFFD; what Append returns is what Entries reads back, the same in
// both stores, and the chain verifies. A retention reason gets the same
// rule.
func TestStoresKeepTheSameText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(e *ledger.Entry)
		want func(t *testing.T, e ledger.Entry)
	}{
		{"class error holding NUL", func(e *ledger.Entry) { e.Classes[0].ErrorKind = "panic: \x00boom" },
			func(t *testing.T, e ledger.Entry) { require.Equal(t, "panic: \ufffdboom", e.Classes[0].ErrorKind) }},
		{"scenario holding NUL", func(e *ledger.Entry) { e.Scenario = "npm\x00" },
			func(t *testing.T, e ledger.Entry) { require.Equal(t, "npm\ufffd", e.Scenario) }},
		{"scenario holding 0xff", func(e *ledger.Entry) { e.Scenario = "npm\xff\xfe" },
			func(t *testing.T, e ledger.Entry) { require.Equal(t, "npm\ufffd\ufffd", e.Scenario) }},
		{"component name and value", func(e *ledger.Entry) { e.Components = map[string]string{"m\x00": "v\xc3"} },
			func(t *testing.T, e ledger.Entry) {
				require.Equal(t, map[string]string{"m\ufffd": "v\ufffd"}, e.Components)
			}},
		{"revision and CI job", func(e *ledger.Entry) { e.Revision, e.CIJob = "\x00", "job\x80" },
			func(t *testing.T, e ledger.Entry) {
				require.Equal(t, "\ufffd", e.Revision)
				require.Equal(t, "job\ufffd", e.CIJob)
			}},
		{"valid text kept", func(e *ledger.Entry) { e.Classes[0].ErrorKind = "é \ufffd \\u0000 \t\n" },
			func(t *testing.T, e ledger.Entry) { require.Equal(t, "é \ufffd \\u0000 \t\n", e.Classes[0].ErrorKind) }},
	}
	run := func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn, adminDSN := b.fresh(t)
		c := &clock{}
		s := open(t, dsn, c)
		var appended []ledger.Entry
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := verdict("npm", ledger.Pass)
				e.Classes = []gate.Class{{Runs: 50}}
				tc.edit(&e)
				got, err := s.Append(ctx, e)
				require.NoError(t, err)
				tc.want(t, got)
				appended = append(appended, got)
				var back []ledger.Entry
				require.NoError(t, s.Entries(ctx, got.Seq, got.Seq, func(e ledger.Entry) error {
					back = append(back, e)
					return nil
				}))
				require.Equal(t, []ledger.Entry{got}, back)
			})
		}
		a, err := open(t, adminDSN, c).Retain(ctx, 2, "drop \x00 the \xff first")
		require.NoError(t, err)
		require.Equal(t, "drop \ufffd the \ufffd first", a.Admin.Reason)
		require.Equal(t, append(appended[1:], a), all(t, s))
		verifyOK(t, s)
	}
	t.Run("embedded", func(t *testing.T) { run(t, embeddedBackend()) })
	t.Run("postgres", func(t *testing.T) {
		b, _ := postgresBackend(t)
		run(t, b)
	})
}

// TestLedgerWithNULStillVerifies: an entry sealed before the rule, whose
// class error holds NUL ("\u0000" in the file), still verifies and reads
// back as it was written.
func TestLedgerWithNULStillVerifies(t *testing.T) {
	t.Parallel()
	body := `{"schema":1,"kind":"verdict","scenario":"npm","verdict":"BROKEN","classes":[{"runs":1,"error":"x\u0000y"}],"recorded_at":"2026-03-01T12:00:00Z"}`
	path := newerLedger(t, []byte(body))
	s := open(t, path, &clock{})
	verifyOK(t, s)
	entries := all(t, s)
	require.Equal(t, "x\x00y", entries[1].Classes[0].ErrorKind)
	fill(t, s, 1)
	verifyOK(t, s)
}

// agreeingStores are the stores FuzzStoresAgree appends to: the embedded
// store always, PostgreSQL when a server can be started (required when
// pgtest.Required).
type agreeingStores struct {
	stores []*ledger.Store
	names  []string
}

func newAgreeingStores(f *testing.F) *agreeingStores {
	f.Helper()
	ctx := context.Background()
	a := &agreeingStores{}
	add := func(name, dsn string) {
		s, err := ledger.Config{Now: (&clock{}).Now}.Open(ctx, dsn)
		require.NoError(f, err)
		f.Cleanup(func() { require.NoError(f, s.Close()) })
		a.stores, a.names = append(a.stores, s), append(a.names, name)
	}
	add("embedded", filepath.Join(f.TempDir(), "ledger.jsonl"))
	//detvet:ignore the role the server runs as, from the environment as pgtest.Start reads it
	srv, err := pgtest.StartServer(ctx, pgtest.Config{User: os.Getenv("CODEGENIE_PGTEST_USER")})
	if errors.Is(err, pgtest.ErrNoServer) && !pgtest.Required() {
		f.Logf("PostgreSQL half skipped: %v", err)
		return a
	}
	require.NoError(f, err)
	f.Cleanup(func() { require.NoError(f, srv.Stop()) })
	require.NoError(f, srv.Exec(ctx, "postgres", "CREATE DATABASE fuzz"))
	require.NoError(f, postgres.Install(ctx, srv.DSN(pgtest.Superuser, "fuzz")))
	require.NoError(f, srv.Exec(ctx, "postgres", "CREATE ROLE ci_app LOGIN IN ROLE "+postgres.AppRole))
	add("postgres", srv.DSN("ci_app", "fuzz"))
	return a
}

// FuzzStoresAgree appends the same generated entry to both stores: both
// accept it or both refuse it as invalid; what each Append returns holds
// only valid UTF-8 without NUL, and what Entries reads back is that entry,
// the same in both stores.
func FuzzStoresAgree(f *testing.F) {
	f.Add("npm", "fallback", "panic: \x00", "m", "v", "TestGate/npm", "./properties", "/e/b.zst", 3)
	f.Add("npm\xff", "", "", "\x00", "\xc3", "TestGate", ".", "", 1)
	f.Add("a\x00b", "p\x00", "e\xfe\xff", "k\x80", "x", "", "", "", 0)
	f.Add("", "fallback", "", "", "", "-o=x", "-coverprofile=y", "-e", 2)
	f.Add("npm", "", "", "k", "k", "TestGate\n-o=x", "example.com/m/p", "e\nx", -1)
	stores := newAgreeingStores(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, scenario, path, classErr, compKey, compVal, test, pkg, evidence string, runs int) {
		e := ledger.Entry{
			Outcome: gate.Outcome{Scenario: scenario, Verdict: ledger.Broken, Runs: runs, Key: "k", Components: map[string]string{compKey: compVal, "model": compVal + compKey}, Classes: []gate.Class{{Runs: runs, ErrorKind: classErr}}, Test: test, Package: pkg, Evidence: evidence},
			Path:    path,
		}
		var first ledger.Entry
		var firstErr error
		for i, s := range stores.stores {
			got, err := s.Append(ctx, e)
			if i == 0 {
				first, firstErr = got, err
				if err != nil {
					require.ErrorIs(t, err, ledger.ErrInvalidEntry)
					continue
				}
				requireStorable(t, got)
			} else {
				require.Equal(t, firstErr == nil, err == nil, "%s: %v; embedded: %v", stores.names[i], err, firstErr)
				if err != nil {
					require.ErrorIs(t, err, ledger.ErrInvalidEntry)
					continue
				}
				require.Equal(t, first, got, stores.names[i])
			}
			var back []ledger.Entry
			require.NoError(t, s.Entries(ctx, got.Seq, got.Seq, func(e ledger.Entry) error {
				back = append(back, e)
				return nil
			}))
			require.Equal(t, []ledger.Entry{got}, back, stores.names[i])
		}
	})
}

// requireStorable fails unless every string of e is valid UTF-8 without
// NUL.
func requireStorable(t *testing.T, e ledger.Entry) {
	t.Helper()
	ledger.VisitStrings(reflect.ValueOf(e), func(s string) {
		require.True(t, utf8.ValidString(s) && !strings.ContainsRune(s, 0), "%q", s)
	})
}
