package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/internal/pgtest"
	"github.com/codegenie/codegenie/ledger"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// backend makes fresh empty ledgers of one store.
type backend struct {
	name string
	// fresh returns the DSN of a new empty ledger and the DSN that may
	// run retention on it (the same for the embedded store).
	fresh func(t *testing.T) (dsn, adminDSN string)
}

func embeddedBackend() backend {
	return backend{name: "embedded", fresh: func(t *testing.T) (string, string) {
		p := filepath.Join(t.TempDir(), "ledger.jsonl")
		return p, p
	}}
}

// server is the one PostgreSQL server of this test binary, started by
// the first test that asks for it and stopped by TestMain: every ledger
// on it is a database of its own, so tests share nothing through it.
var server struct {
	once      sync.Once
	srv       *pgtest.Server
	err       error
	rolesOnce sync.Once
	roles     error
	dbs       atomic.Int64
	// install serialises the making of databases: on a new cluster,
	// Installs into two databases at once both create the cluster's
	// roles, and the second fails with a unique violation.
	install sync.Mutex
}

// sharedServer returns the package's server, starting it at the first
// call. Without the server binaries it skips t, or fails it when
// pgtest.Required.
func sharedServer(t *testing.T) *pgtest.Server {
	t.Helper()
	server.once.Do(func() {
		//detvet:ignore the role the server runs as, from the environment as pgtest.Start reads it
		server.srv, server.err = pgtest.StartServer(context.Background(), pgtest.Config{User: os.Getenv("CODEGENIE_PGTEST_USER")})
	})
	if errors.Is(server.err, pgtest.ErrNoServer) && !pgtest.Required() {
		t.Skipf("%v (CI=true makes this a failure)", server.err)
	}
	require.NoError(t, server.err)
	return server.srv
}

// stopSharedServer stops the package's server if a test started it.
func stopSharedServer() error {
	if server.srv == nil {
		return nil
	}
	return server.srv.Stop()
}

// postgresBackend makes ledgers on the package's server; each ledger is a
// new database installed by the superuser and used through log-in roles
// that are members of the application and admin roles.
func postgresBackend(t *testing.T) (backend, *pgtest.Server) {
	srv := sharedServer(t)
	ctx := context.Background()
	return backend{name: "postgres", fresh: func(t *testing.T) (string, string) {
		db := fmt.Sprintf("ledger_%d", server.dbs.Add(1))
		server.install.Lock()
		defer server.install.Unlock()
		require.NoError(t, srv.Exec(ctx, "postgres", "CREATE DATABASE "+db))
		require.NoError(t, postgres.Install(ctx, srv.DSN(pgtest.Superuser, db)))
		// The first install made the roles the log-in roles join.
		server.rolesOnce.Do(func() {
			server.roles = errors.Join(
				srv.Exec(ctx, "postgres", "CREATE ROLE ci_app LOGIN IN ROLE "+postgres.AppRole),
				srv.Exec(ctx, "postgres", "CREATE ROLE ci_admin LOGIN IN ROLE "+postgres.AdminRole))
		})
		require.NoError(t, server.roles)
		return srv.DSN("ci_app", db), srv.DSN("ci_admin", db)
	}}, srv
}

// clock is a fake clock: each reading is one second after the last.
type clock struct{ n atomic.Int64 }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func (c *clock) Now() time.Time { return epoch.Add(time.Duration(c.n.Add(1)) * time.Second) }

func open(t *testing.T, dsn string, c *clock) *ledger.Store {
	t.Helper()
	s, err := ledger.Config{Now: c.Now}.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func verdict(scenario string, v gate.Verdict) ledger.Entry {
	return ledger.Entry{
		Outcome: gate.Outcome{
			Scenario: scenario, Verdict: v, Runs: 50,
			Key: "k-" + scenario, Components: map[string]string{"cassette_id": "c1", "store_digest": "s1"},
			Classes:      []gate.Class{{Runs: 50, OutputDigest: digest("o" + scenario)}},
			OutputDigest: digest("o" + scenario), ChainDigest: digest("c" + scenario),
			Test: "TestGate/" + scenario, Package: "./properties",
		},
		Kind:     ledger.KindVerdict,
		Path:     "fallback",
		Revision: "rev1",
	}
}

func digest(s string) string {
	return fmt.Sprintf("%064x", []byte(s))[:64]
}

func verifyOK(t *testing.T, s *ledger.Store) *ledger.VerifyReport {
	t.Helper()
	rep, err := s.Verify(context.Background())
	require.NoError(t, err)
	require.NoError(t, rep.Err(), "%+v", rep.Problems)
	return rep
}

func all(t *testing.T, s *ledger.Store) []ledger.Entry {
	t.Helper()
	var out []ledger.Entry
	require.NoError(t, s.Entries(context.Background(), 0, 0, func(e ledger.Entry) error {
		out = append(out, e)
		return nil
	}))
	return out
}

func TestConformance(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { conformance(t, embeddedBackend()) })
	t.Run("postgres", func(t *testing.T) {
		b, _ := postgresBackend(t)
		conformance(t, b)
	})
}

func conformance(t *testing.T, b backend) {
	t.Run("chain", func(t *testing.T) { testChain(t, b) })
	t.Run("refuses invalid entries", func(t *testing.T) { testInvalid(t, b) })
	t.Run("concurrent appenders", func(t *testing.T) { testLoad(t, b) })
	t.Run("retention", func(t *testing.T) { testRetention(t, b) })
	t.Run("retention while appending", func(t *testing.T) { testRetentionUnderLoad(t, b) })
	t.Run("mixed schemas warn", func(t *testing.T) { testMixedSchemas(t, b) })
	t.Run("flakes", func(t *testing.T) { testFlakes(t, b) })
	t.Run("rerun", func(t *testing.T) { testRerun(t, b) })
}

func testChain(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	c := &clock{}
	s := open(t, dsn, c)
	var sealed []ledger.Entry
	for _, sc := range []string{"npm", "go", "pypi"} {
		e, err := s.Append(ctx, verdict(sc, ledger.Pass))
		require.NoError(t, err)
		sealed = append(sealed, e)
	}
	prev := ""
	for i, e := range sealed {
		require.Equal(t, uint64(i+1), e.Seq)
		require.Equal(t, ledger.SchemaVersion, e.Schema)
		require.Equal(t, prev, e.Prev)
		h, err := e.ComputeHash()
		require.NoError(t, err)
		require.Equal(t, h, e.Hash)
		require.Equal(t, epoch.Add(time.Duration(i+1)*time.Second).Truncate(time.Microsecond), e.RecordedAt)
		prev = e.Hash
	}
	require.Equal(t, sealed, all(t, s))

	// A second handle continues the same chain.
	s2 := open(t, dsn, c)
	e, err := s2.Append(ctx, verdict("npm", ledger.Broken))
	require.NoError(t, err)
	require.Equal(t, uint64(4), e.Seq)
	require.Equal(t, sealed[2].Hash, e.Prev)
	e, err = s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	require.Equal(t, uint64(5), e.Seq)

	rep := verifyOK(t, s)
	require.Equal(t, 5, rep.Entries)
	require.Equal(t, uint64(1), rep.First)
	require.Equal(t, uint64(5), rep.Head)
	require.Equal(t, e.Hash, rep.HeadHash)
	require.Empty(t, rep.Warnings)

	var ranged []uint64
	require.NoError(t, s.Entries(ctx, 2, 4, func(e ledger.Entry) error {
		ranged = append(ranged, e.Seq)
		return nil
	}))
	require.Equal(t, []uint64{2, 3, 4}, ranged)
}

func testInvalid(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	s := open(t, dsn, &clock{})
	_, err := s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	tests := []struct {
		name string
		edit func(*ledger.Entry)
	}{
		{"no scenario", func(e *ledger.Entry) { e.Scenario = "" }},
		{"unknown verdict", func(e *ledger.Entry) { e.Verdict = "FLAKY" }},
		{"unknown kind", func(e *ledger.Entry) { e.Kind = "note" }},
		{"seq set by caller", func(e *ledger.Entry) { e.Seq = 7 }},
		{"hash set by caller", func(e *ledger.Entry) { e.Hash = digest("x") }},
		{"recorded_at set by caller", func(e *ledger.Entry) { e.RecordedAt = epoch }},
		{"bad digest", func(e *ledger.Entry) { e.OutputDigest = "xyz" }},
		{"bad class digest", func(e *ledger.Entry) { e.Classes[0].OutputDigest = "xyz" }},
		{"negative class runs", func(e *ledger.Entry) { e.Classes[0].Runs = -1 }},
		{"package that is a flag", func(e *ledger.Entry) { e.Package = "-exec=rm" }},
		{"command of another test", func(e *ledger.Entry) {
			e.Commands = []gate.Command{{Purpose: "reproduce", Argv: []string{"go", "test", "./properties", "-run", "^TestOther$", "-count=1"}}}
		}},
		{"rerun without target", func(e *ledger.Entry) { e.Kind = ledger.KindRerun }},
		{"admin without act", func(e *ledger.Entry) { e.Kind = ledger.KindAdmin }},
		{"too large", func(e *ledger.Entry) { e.Evidence = strings.Repeat("e", ledgerdb.MaxEntryBytes) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := verdict("npm", ledger.Pass)
			tc.edit(&e)
			_, err := s.Append(ctx, e)
			require.ErrorIs(t, err, ledger.ErrInvalidEntry)
		})
	}
	require.Len(t, all(t, s), 1)
	verifyOK(t, s)

	// An entry without a kind is a gate verdict: the kind callers append.
	e := verdict("npm", ledger.Pass)
	e.Kind = ""
	got, err := s.Append(ctx, e)
	require.NoError(t, err)
	require.Equal(t, ledger.KindVerdict, got.Kind)
	require.Equal(t, ledger.KindVerdict, all(t, s)[1].Kind)
	verifyOK(t, s)
}

// testLoad: 8 writers, each with its own handle, append 500 entries each
// at once; the sequence must end gapless with a verifying chain and every
// writer's entries present in its own order.
func testLoad(t *testing.T, b backend) {
	const writers, each = 8, 500
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	c := &clock{}
	handles := make([]*ledger.Store, writers)
	for w := range handles {
		handles[w] = open(t, dsn, c)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w, s := range handles {
		wg.Go(func() {
			for i := range each {
				e := verdict(fmt.Sprintf("w%d", w), ledger.Pass)
				e.Runs = i + 1
				if _, err := s.Append(ctx, e); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%s: %d writers x %d entries in %v", b.name, writers, each, time.Since(start))
	rep := verifyOK(t, handles[0])
	require.Equal(t, writers*each, rep.Entries)
	require.Equal(t, uint64(writers*each), rep.Head)
	next := map[string]int{}
	for i, e := range all(t, handles[0]) {
		require.Equal(t, uint64(i+1), e.Seq)
		next[e.Scenario]++
		require.Equal(t, next[e.Scenario], e.Runs, "writer %s's entries out of order at seq %d", e.Scenario, e.Seq)
	}
	require.Len(t, next, writers)
}

func testRetention(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, adminDSN := b.fresh(t)
	c := &clock{}
	s := open(t, dsn, c)
	var hashes []string
	for i := range 10 {
		e, err := s.Append(ctx, verdict(fmt.Sprintf("s%d", i%3), ledger.Pass))
		require.NoError(t, err)
		hashes = append(hashes, e.Hash)
	}
	admin := open(t, adminDSN, c)
	_, err := admin.Retain(ctx, 6, "")
	require.ErrorIs(t, err, ledger.ErrBadRetention, "a retention without a reason")
	_, err = admin.Retain(ctx, 12, "x")
	require.ErrorIs(t, err, ledger.ErrBadRetention, "past the head")

	a, err := admin.Retain(ctx, 6, "keep 90 days")
	require.NoError(t, err)
	require.Equal(t, uint64(11), a.Seq)
	require.Equal(t, ledger.KindAdmin, a.Kind)
	require.Equal(t, &ledger.Admin{Action: ledger.ActionRetain, DroppedFrom: 1, DroppedTo: 5, Boundary: hashes[4], Reason: "keep 90 days"}, a.Admin)
	require.Equal(t, hashes[9], a.Prev)

	_, err = admin.Retain(ctx, 3, "x")
	require.ErrorIs(t, err, ledger.ErrBadRetention, "nothing left to drop")

	// Appends continue after it, through a handle opened before it.
	e, err := s.Append(ctx, verdict("s0", ledger.Broken))
	require.NoError(t, err)
	require.Equal(t, uint64(12), e.Seq)
	require.Equal(t, a.Hash, e.Prev)

	rep := verifyOK(t, s)
	require.Equal(t, uint64(6), rep.First)
	require.Equal(t, 7, rep.Entries)

	// A second retention up to the head leaves only its own entry.
	a2, err := admin.Retain(ctx, 13, "all")
	require.NoError(t, err)
	rep = verifyOK(t, s)
	require.Equal(t, a2.Seq, rep.First)
	require.Equal(t, 1, rep.Entries)
}

func testMixedSchemas(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	s := open(t, dsn, &clock{})
	_, err := s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	old := verdict("npm", ledger.Pass)
	old.Schema = 3 // a newer writer's
	_, err = s.Append(ctx, old)
	require.NoError(t, err)
	_, err = s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	rep := verifyOK(t, s)
	require.Equal(t, []ledger.SchemaCount{{Version: 2, Entries: 2}, {Version: 3, Entries: 1}}, rep.Schemas)
	require.Len(t, rep.Warnings, 2)
	require.Equal(t, uint64(2), rep.Warnings[0].Seq)
	require.Contains(t, rep.Warnings[1].Message, "mixed schema versions")
}

func testFlakes(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	s := open(t, dsn, &clock{})
	for _, e := range []ledger.Entry{
		verdict("npm", ledger.Pass),             // 1
		verdict("go", ledger.Pass),              // 2
		verdict("npm", ledger.Nondeterministic), // 3
		verdict("npm", ledger.Pass),             // 4
		verdict("go", ledger.Broken),            // 5
		verdict("npm", ledger.Pass),             // 6
	} {
		_, err := s.Append(ctx, e)
		require.NoError(t, err)
	}
	rep, err := s.Flakes(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, rep.UnknownSchema)
	require.Zero(t, rep.UnknownVerdict)
	require.Equal(t, []ledger.Flake{
		{Scenario: "go", Path: "fallback", Verdicts: []ledger.Tally{
			{Verdict: ledger.Pass, Count: 1, First: 2, Last: 2}, {Verdict: ledger.Nondeterministic}, {Verdict: ledger.Broken, Count: 1, First: 5, Last: 5}}},
		{Scenario: "npm", Path: "fallback", Verdicts: []ledger.Tally{
			{Verdict: ledger.Pass, Count: 3, First: 1, Last: 6}, {Verdict: ledger.Nondeterministic, Count: 1, First: 3, Last: 3}, {Verdict: ledger.Broken}}},
	}, rep.Flakes)
	rep, err = s.Flakes(ctx, 4)
	require.NoError(t, err)
	require.Equal(t, ledger.Tally{Verdict: ledger.Pass, Count: 2, First: 4, Last: 6}, rep.Flakes[1].Verdicts[0])
	require.Equal(t, 0, rep.Flakes[1].Verdicts[1].Count)
}

func testRerun(t *testing.T, b backend) {
	ctx := context.Background()
	dsn, _ := b.fresh(t)
	s := open(t, dsn, &clock{})
	for _, sc := range []string{"same", "diverged", "moved", "failed"} {
		_, err := s.Append(ctx, verdict(sc, ledger.Pass))
		require.NoError(t, err)
	}
	ev := func(ctx context.Context, rec ledger.Entry) (ledger.Entry, error) {
		cur := verdict(rec.Scenario, ledger.Pass)
		switch rec.Scenario {
		case "diverged":
			cur.OutputDigest = digest("other")
		case "moved":
			cur.Key = "k2"
			cur.Components = map[string]string{"cassette_id": "c2", "store_digest": "s1", "model": "m"}
		case "failed":
			return ledger.Entry{}, fmt.Errorf("go test failed to build")
		}
		return cur, nil
	}
	rep, err := s.Rerun(ctx, ledger.RerunConfig{From: 1, To: 4, Evaluate: ev, Revision: "rev2"})
	require.NoError(t, err)
	require.Equal(t, []string{ledger.StatusSame, ledger.StatusDiverged, ledger.StatusNotComparable, ledger.StatusError},
		[]string{rep.Items[0].Status, rep.Items[1].Status, rep.Items[2].Status, rep.Items[3].Status})
	require.Equal(t, []string{"output_digest"}, rep.Items[1].Differs)
	require.Equal(t, []string{"cassette_id", "model"}, rep.Items[2].Moved)
	require.ErrorIs(t, rep.Err(), ledger.ErrDiverged)
	require.Contains(t, rep.Err().Error(), "[2 4]")

	entries := all(t, s)
	require.Len(t, entries, 8)
	for i, e := range entries[4:] {
		require.Equal(t, ledger.KindRerun, e.Kind)
		require.Equal(t, uint64(i+1), e.RerunOf)
		require.Equal(t, rep.Items[i].Status, e.Rerun.Status)
		require.Equal(t, e.Seq, rep.Items[i].RerunSeq)
		require.Equal(t, "rev2", e.Revision)
	}
	verifyOK(t, s)

	// Rerunning the reruns skips them; flakes do not count them.
	rep, err = s.Rerun(ctx, ledger.RerunConfig{From: 5, Evaluate: ev})
	require.NoError(t, err)
	require.Equal(t, 4, rep.Skipped)
	require.NoError(t, rep.Err())
	_, err = s.Rerun(ctx, ledger.RerunConfig{From: 50, Evaluate: ev})
	require.ErrorIs(t, err, ledger.ErrEmptyRange)
}

// testRetentionUnderLoad retains while four writers append: no append is
// lost to the rewrite and the chain verifies from the kept entries on.
func testRetentionUnderLoad(t *testing.T, b backend) {
	const writers, each = 4, 100
	ctx := context.Background()
	dsn, adminDSN := b.fresh(t)
	c := &clock{}
	fill(t, open(t, dsn, c), 60)
	admin := open(t, adminDSN, c)
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		s := open(t, dsn, c)
		wg.Go(func() {
			for range each {
				if _, err := s.Append(ctx, verdict(fmt.Sprintf("w%d", w), ledger.Pass)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		if _, err := admin.Retain(ctx, 51, "under load"); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	rep := verifyOK(t, admin)
	require.Equal(t, uint64(51), rep.First)
	require.Equal(t, uint64(60+writers*each+1), rep.Head)
	require.Equal(t, 60+writers*each+1-50, rep.Entries)
}
