package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// The PostgreSQL objects Install creates; see the package documentation.
const (
	// Table is the ledger table.
	Table = "codegenie_ledger"
	// AppRole may only SELECT and INSERT: the role CI appends as.
	AppRole = "codegenie_ledger_app"
	// AdminRole may SELECT and call the retention procedure.
	AdminRole = "codegenie_ledger_admin"
	// appendLock is the transaction-scoped advisory lock key that
	// serialises appends ("codegeni" as big-endian bytes).
	appendLock int64 = 0x636f646567656e69
)

// installSQL creates everything idempotently. %[1]s is the quoted schema.
const installSQL = `
DO $$ BEGIN CREATE ROLE codegenie_ledger_app NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE codegenie_ledger_admin NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS %[1]s.codegenie_ledger (
	seq         bigint PRIMARY KEY CHECK (seq > 0),
	prev        text NOT NULL,
	hash        text NOT NULL UNIQUE,
	kind        text NOT NULL,
	scenario    text NOT NULL,
	recorded_at timestamptz NOT NULL,
	body        text NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS codegenie_ledger_prev ON %[1]s.codegenie_ledger (prev);

CREATE OR REPLACE FUNCTION %[1]s.codegenie_ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'codegenie ledger is append-only: %% refused', TG_OP
		USING HINT = 'entries are never changed; retention goes through codegenie_ledger_retain';
END $$;
CREATE OR REPLACE TRIGGER codegenie_ledger_no_update BEFORE UPDATE ON %[1]s.codegenie_ledger
	FOR EACH ROW EXECUTE FUNCTION %[1]s.codegenie_ledger_refuse();
CREATE OR REPLACE TRIGGER codegenie_ledger_no_delete BEFORE DELETE ON %[1]s.codegenie_ledger
	FOR EACH ROW EXECUTE FUNCTION %[1]s.codegenie_ledger_refuse();
CREATE OR REPLACE TRIGGER codegenie_ledger_no_truncate BEFORE TRUNCATE ON %[1]s.codegenie_ledger
	FOR EACH STATEMENT EXECUTE FUNCTION %[1]s.codegenie_ledger_refuse();

CREATE OR REPLACE FUNCTION %[1]s.codegenie_ledger_chain() RETURNS trigger LANGUAGE plpgsql
SET search_path = %[1]s, pg_temp AS $$
DECLARE
	head_seq bigint;
	head_hash text;
	b jsonb;
BEGIN
	PERFORM pg_advisory_xact_lock(%[2]d);
	SELECT seq, hash INTO head_seq, head_hash FROM codegenie_ledger ORDER BY seq DESC LIMIT 1;
	IF head_seq IS NULL AND (NEW.seq <> 1 OR NEW.prev <> '') THEN
		RAISE EXCEPTION 'codegenie ledger: the first entry must be seq 1 with no prev, not seq %% after %%', NEW.seq, NEW.prev;
	END IF;
	IF head_seq IS NOT NULL AND (NEW.seq <> head_seq + 1 OR NEW.prev <> head_hash) THEN
		RAISE EXCEPTION 'codegenie ledger: an entry must be seq %% with prev %%, the head''s hash, not seq %% after %%',
			head_seq + 1, head_hash, NEW.seq, NEW.prev;
	END IF;
	IF NEW.hash !~ '^[0-9a-f]{64}$' THEN
		RAISE EXCEPTION 'codegenie ledger: hash of seq %% is not 64 lowercase hex digits', NEW.seq;
	END IF;
	IF octet_length(NEW.body) > %[3]d THEN
		RAISE EXCEPTION 'codegenie ledger: body of seq %% is longer than %% bytes', NEW.seq, %[3]d;
	END IF;
	BEGIN
		b := NEW.body::jsonb;
	EXCEPTION WHEN others THEN
		RAISE EXCEPTION 'codegenie ledger: body of seq %% is not JSON', NEW.seq;
	END;
	IF jsonb_typeof(b) IS DISTINCT FROM 'object'
		OR jsonb_typeof(b->'schema') IS DISTINCT FROM 'number' OR jsonb_typeof(b->'seq') IS DISTINCT FROM 'number'
		OR (b->>'seq')::numeric <> NEW.seq OR (b->>'schema')::numeric < 1
		OR jsonb_typeof(b->'hash') IS DISTINCT FROM 'string' OR b->>'hash' <> NEW.hash
		OR coalesce(b->>'prev', '') <> NEW.prev OR (b ? 'prev' AND jsonb_typeof(b->'prev') <> 'string')
		OR jsonb_typeof(b->'kind') IS DISTINCT FROM 'string' OR b->>'kind' <> NEW.kind
		OR coalesce(b->>'scenario', '') <> NEW.scenario OR (b ? 'scenario' AND jsonb_typeof(b->'scenario') <> 'string') THEN
		RAISE EXCEPTION 'codegenie ledger: body of seq %% does not state the seq, prev, hash, kind and scenario of its row', NEW.seq;
	END IF;
	RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER codegenie_ledger_chain BEFORE INSERT ON %[1]s.codegenie_ledger
	FOR EACH ROW EXECUTE FUNCTION %[1]s.codegenie_ledger_chain();

CREATE OR REPLACE PROCEDURE %[1]s.codegenie_ledger_retain(
	p_before bigint, p_seq bigint, p_prev text, p_hash text, p_recorded_at timestamptz, p_body text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = %[1]s, pg_temp AS $$
DECLARE
	head_seq bigint;
	head_hash text;
	first_seq bigint;
	admin jsonb := p_body::jsonb;
BEGIN
	PERFORM pg_advisory_xact_lock(%[2]d);
	SELECT seq, hash INTO head_seq, head_hash FROM codegenie_ledger ORDER BY seq DESC LIMIT 1;
	SELECT min(seq) INTO first_seq FROM codegenie_ledger;
	IF head_seq IS NULL OR p_seq <> head_seq + 1 OR p_prev <> head_hash THEN
		RAISE EXCEPTION 'codegenie ledger: the retention entry must follow the head (seq %%)', head_seq;
	END IF;
	IF p_before <= first_seq OR p_before > head_seq + 1 THEN
		RAISE EXCEPTION 'codegenie ledger: retention before seq %% drops nothing or more than there is (seq %%..%%)', p_before, first_seq, head_seq;
	END IF;
	IF admin->>'kind' <> 'admin' OR (admin->>'seq')::bigint <> p_seq OR (admin->>'hash') <> p_hash
		OR (admin->'admin'->>'dropped_to')::bigint <> p_before - 1 THEN
		RAISE EXCEPTION 'codegenie ledger: the retention entry does not record this retention';
	END IF;
	-- The admin entry goes in first, while the head it chains to is there.
	INSERT INTO codegenie_ledger (seq, prev, hash, kind, scenario, recorded_at, body)
		VALUES (p_seq, p_prev, p_hash, 'admin', '', p_recorded_at, p_body);
	ALTER TABLE codegenie_ledger DISABLE TRIGGER codegenie_ledger_no_delete;
	DELETE FROM codegenie_ledger WHERE seq < p_before;
	ALTER TABLE codegenie_ledger ENABLE TRIGGER codegenie_ledger_no_delete;
END $$;

REVOKE ALL ON %[1]s.codegenie_ledger FROM PUBLIC;
REVOKE ALL ON PROCEDURE %[1]s.codegenie_ledger_retain(bigint, bigint, text, text, timestamptz, text) FROM PUBLIC;
GRANT USAGE ON SCHEMA %[1]s TO codegenie_ledger_app, codegenie_ledger_admin;
GRANT SELECT, INSERT ON %[1]s.codegenie_ledger TO codegenie_ledger_app;
GRANT SELECT ON %[1]s.codegenie_ledger TO codegenie_ledger_admin;
GRANT EXECUTE ON PROCEDURE %[1]s.codegenie_ledger_retain(bigint, bigint, text, text, timestamptz, text) TO codegenie_ledger_admin;
`

// Install creates the ledger table, its chain and append-only triggers,
// the retention procedure and the two roles in the current schema of the
// database dsn names; run again on an existing install, it brings the
// triggers and the procedure up to this version (an install made before
// the chain trigger existed is refused for appending until it is). dsn must name a role that may create tables and
// roles; the table and the procedure belong to it. Install is idempotent.
// Log-in roles get their rights by membership: GRANT codegenie_ledger_app
// TO ci_user.
func Install(ctx context.Context, dsn string) error {
	if !ledgerdb.IsPostgres(dsn) {
		return fmt.Errorf("%w: Install needs a postgres:// URL, not %q", ledgerdb.ErrBadDSN, ledgerdb.RedactDSN(dsn))
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("ledger: connect to %s: %w", ledgerdb.RedactDSN(dsn), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("ledger: install: %w", err)
	}
	sql := fmt.Sprintf(installSQL, pgx.Identifier{schema}.Sanitize(), appendLock, ledgerdb.MaxEntryBytes)
	// The simple protocol runs the statements in one implicit transaction.
	if _, err := conn.Exec(ctx, strings.TrimSpace(sql), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("ledger: install into schema %s: %w", schema, err)
	}
	return nil
}
