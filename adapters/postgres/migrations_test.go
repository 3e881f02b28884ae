package postgres_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/migrations"
)

// Migration 00009 turns the per-day round sets into round starts and
// ggr_daily.rounds counts, from the rows already there; its Down goes back.
func TestMigrationRoundStarts(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 8)
	ctx := t.Context()
	// Given the old shape: round r1 bet on day 1 in games b and a, and on
	// day 2; round r2 on day 2.
	mustExec(t, db, `INSERT INTO readmodels.ggr_daily (client_id, day, provider, game, currency, scale, bets) VALUES
		('acme', '2025-03-01', 'prov', 'b', 'EUR', 2, 100), ('acme', '2025-03-01', 'prov', 'a', 'EUR', 2, 100),
		('acme', '2025-03-02', 'prov', 'a', 'EUR', 2, 200)`)
	mustExec(t, db, `INSERT INTO readmodels.ggr_rounds (client_id, day, provider, game, currency, round_key) VALUES
		('acme', '2025-03-01', 'prov', 'b', 'EUR', 'r1'), ('acme', '2025-03-01', 'prov', 'a', 'EUR', 'r1'),
		('acme', '2025-03-02', 'prov', 'a', 'EUR', 'r1'), ('acme', '2025-03-02', 'prov', 'a', 'EUR', 'r2')`)
	// When migrated up,
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	// then each round starts at its least (day, game) and is counted there.
	if got := rowsText(t, db, `SELECT round_key, day::text, game FROM readmodels.ggr_rounds ORDER BY 1`); got != "r1 2025-03-01 a|r2 2025-03-02 a" {
		t.Fatalf("round starts %q", got)
	}
	if got := rowsText(t, db, `SELECT day::text, game, rounds FROM readmodels.ggr_daily ORDER BY 1, 2`); got != "2025-03-01 a 1|2025-03-01 b 0|2025-03-02 a 1" {
		t.Fatalf("rounds per group %q", got)
	}
	// And down again gives the old tables back, each round on its start.
	if _, err := p.DownTo(ctx, 8); err != nil {
		t.Fatalf("down to 8 again: %v", err)
	}
	if got := rowsText(t, db, `SELECT day::text, game, round_key FROM readmodels.ggr_rounds ORDER BY 1, 3`); got != "2025-03-01 a r1|2025-03-02 a r2" {
		t.Fatalf("old-shape rounds after down %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00010 builds each player's monthly day bitmaps from the daily
// member rows already there; its Down drops them.
func TestMigrationPlayerMonths(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 9)
	ctx := t.Context()
	// Given p1 on 1 and 31 January (two games on the 31st) and 29 February,
	// and p2 in USD on 2 January,
	mustExec(t, db, `INSERT INTO readmodels.ggr_players (client_id, day, provider, game, currency, player_id) VALUES
		('acme', '2024-01-01', 'prov', 'a', 'EUR', 'p1'), ('acme', '2024-01-31', 'prov', 'a', 'EUR', 'p1'),
		('acme', '2024-01-31', 'prov', 'b', 'EUR', 'p1'), ('acme', '2024-02-29', 'other', 'x', 'EUR', 'p1'),
		('acme', '2024-01-02', 'prov', 'a', 'USD', 'p2')`)
	// when migrated up,
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	// then each (month, currency, player) has the bits of its days.
	want := "2024-01-01 EUR p1 1073741825|2024-01-01 USD p2 2|2024-02-01 EUR p1 268435456"
	if got := rowsText(t, db, `SELECT month::text, currency, player_id, days FROM readmodels.ggr_player_months ORDER BY 1, 2`); got != want {
		t.Fatalf("player months %q, want %q", got, want)
	}
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatalf("down to 9 again: %v", err)
	}
	if got := rowsText(t, db, `SELECT count(*) FROM pg_tables WHERE schemaname = 'readmodels' AND tablename = 'ggr_player_months'`); got != "0" {
		t.Fatalf("ggr_player_months after down: %s tables", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00011 counts and marks the numbered history rows per client
// and type and per client and player (those at or below the history
// watermark); its Down drops them.
func TestMigrationFilterMarks(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 10)
	ctx := t.Context()
	// Given 2,100 bets and 10 wins (seq 1..2110, wins last), every other
	// one p1's, numbered up to seq 2105,
	mustExec(t, db, `INSERT INTO readmodels.transactions (id, client_id, type, amount, currency, scale, base_status,
		created_at, seq, sub, position, player_id)
		SELECT gen_random_uuid(), 'acme', CASE WHEN i <= 2100 THEN 'bet' ELSE 'win' END, 1, 'EUR', 2, 'settled',
		       now(), i, 0, i, CASE WHEN i % 2 = 0 THEN 'p1' END
		FROM generate_series(1, 2110) i`)
	mustExec(t, db, `UPDATE readmodels.positions SET position = 2105 WHERE projection = 'history'`)
	// when migrated up,
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	// then the numbered rows are counted per type and player, and every
	// 1,024th of each is marked.
	if got := rowsText(t, db, `SELECT filter, value, rows FROM readmodels.tx_filter_counts ORDER BY 1, 2`); got != "player p1 1052|type bet 2100|type win 5" {
		t.Fatalf("counts %q", got)
	}
	if got := rowsText(t, db, `SELECT filter, value, rn, seq, sub FROM readmodels.tx_filter_marks ORDER BY 1, 2, 3`); got != "player p1 1024 2048 0|type bet 1024 1024 0|type bet 2048 2048 0" {
		t.Fatalf("marks %q", got)
	}
	if _, err := p.DownTo(ctx, 10); err != nil {
		t.Fatalf("down to 10 again: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00012 keeps every provider there is on the v1 signature
// scheme and makes v2 the default of new ones; its Down drops the column.
func TestMigrationProviderSignatureScheme(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 11)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled) VALUES ('old', 'Old', 's', true)`)
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled) VALUES ('new', 'New', 's', true)`)
	if got := rowsText(t, db, `SELECT id, signature_scheme FROM providers ORDER BY id`); got != "new v2|old v1" {
		t.Fatalf("schemes %q", got)
	}
	if _, err := db.ExecContext(ctx, `UPDATE providers SET signature_scheme = 'v3' WHERE id = 'old'`); err == nil {
		t.Fatal("scheme v3 was stored")
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatalf("down to 11 again: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00013 adds the client secrets' reveal trail, append-only; its
// Down drops it (and its trigger function) even with rows in it.
func TestMigrationClientSecretReveals(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 12)
	ctx := t.Context()
	if got := rowsText(t, db, `SELECT to_regclass('client_secret_reveals') IS NULL`); got != "true" {
		t.Fatalf("down at 12, the table exists (%s)", got)
	}
	mustExec(t, db, `INSERT INTO clients (id, name, environment) VALUES ('acme', 'Acme', 'sandbox')`)
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `INSERT INTO client_secret_reveals (client_id, revealed_at, actor) VALUES ('acme', now(), 'admin-token:x')`)
	if _, err := db.ExecContext(ctx, `INSERT INTO client_secret_reveals (client_id, revealed_at, actor) VALUES ('nobody', now(), 'a')`); err == nil {
		t.Fatal("a reveal of an unknown client was stored")
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM client_secret_reveals`); err == nil {
		t.Fatal("the trail lost a row")
	}
	if got := rowsText(t, db, `SELECT client_id, remote_addr = '', user_agent = '', reason = '' FROM client_secret_reveals`); got != "acme true true true" {
		t.Fatalf("trail %q", got)
	}
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("down to 12 again: %v", err)
	}
	if got := rowsText(t, db, `SELECT to_regclass('client_secret_reveals') IS NULL,
		NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'client_secret_reveals_append_only')`); got != "true true" {
		t.Fatalf("after Down: %s", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// migratedDownTo is a new database migrated up, then down to version, and
// its migrations.
func migratedDownTo(t *testing.T, version int64) (*goose.Provider, *sql.DB) {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), version); err != nil {
		t.Fatalf("down to %d: %v", version, err)
	}
	return p, db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// rowsText is q's rows, columns joined by spaces, rows by "|".
func rowsText(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "|")
}

// Migration 00014 adds the checkpoint signing keys and the signed
// checkpoints, both append-only; its Down drops them even with rows in them.
func TestMigrationCheckpoints(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 13)
	ctx := t.Context()
	if got := rowsText(t, db, `SELECT to_regclass('checkpoints') IS NULL, to_regclass('checkpoint_keys') IS NULL`); got != "true true" {
		t.Fatalf("down at 13, the tables exist (%s)", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `INSERT INTO checkpoint_keys (key_id, public_key, sealed_private_key, created_at)
		VALUES ('0011223344556677', decode(repeat('ab', 32), 'hex'), '\x01', now())`)
	mustExec(t, db, `INSERT INTO checkpoints (run_id, client_id, position, chain_hash, signed_at, key_id, payload, signature)
		VALUES (1, '', 7, '\x00', now(), '0011223344556677', '\x7b7d', decode(repeat('00', 64), 'hex'))`)
	refused := []string{
		`UPDATE checkpoints SET position = 8`,
		`DELETE FROM checkpoints`,
		`TRUNCATE checkpoints CASCADE`,
		`UPDATE checkpoint_keys SET created_at = now()`,
		`DELETE FROM checkpoint_keys`,
		`INSERT INTO checkpoints (run_id, client_id, position, chain_hash, signed_at, key_id, payload, signature)
			VALUES (1, '', 7, '\x00', now(), 'ffffffffffffffff', '\x7b7d', decode(repeat('00', 64), 'hex'))`, // an unknown key
		`INSERT INTO checkpoints (run_id, client_id, position, chain_hash, signed_at, key_id, payload, signature)
			VALUES (1, '', 7, '\x00', now(), '0011223344556677', '\x7b7d', '\x00')`, // not a signature
	}
	for _, q := range refused {
		if _, err := db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s: not refused", q)
		}
	}
	if got := rowsText(t, db, `SELECT count(*), min(position) FROM checkpoints`); got != "1 7" {
		t.Fatalf("checkpoints %q", got)
	}
	if _, err := p.DownTo(ctx, 13); err != nil {
		t.Fatalf("down to 13 again: %v", err)
	}
	if got := rowsText(t, db, `SELECT to_regclass('checkpoints') IS NULL, to_regclass('checkpoint_keys') IS NULL,
		NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'checkpoints_append_only')`); got != "true true true" {
		t.Fatalf("after Down: %s", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00019 lets a provider speak the redtiger wallet protocol; its
// Down moves such a provider back to pitboss before the list shrinks.
func TestMigrationRedTigerProtocol(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 16)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled) VALUES ('rt', 'Red Tiger', 's', true)`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = 'redtiger' WHERE id = 'rt'`); err == nil {
		t.Fatal("redtiger stored before the migration")
	}
	if _, err := p.UpTo(ctx, 28); err != nil { // 00029 leaves the names to Go
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `UPDATE providers SET wallet_protocol = 'redtiger' WHERE id = 'rt'`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = 'hub99' WHERE id = 'rt'`); err == nil {
		t.Fatal("an unknown protocol was stored")
	}
	if _, err := p.DownTo(ctx, 16); err != nil {
		t.Fatalf("down to 16: %v", err)
	}
	if got := rowsText(t, db, `SELECT id, wallet_protocol FROM providers`); got != "rt pitboss" {
		t.Fatalf("after down %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

func TestMigrationProviderLaunchCredentials(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 22)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled, kind, endpoints)
		VALUES ('cg', 'Caleta', 's', true, 'json', '{https://cg.example}')`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET kind = 'caleta' WHERE id = 'cg'`); err == nil {
		t.Fatal("kind caleta stored before the migration")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := rowsText(t, db, `SELECT id, kind, launch_operator_id = '', launch_country = '', launch_secret_sealed IS NULL,
		launch_key_fingerprint = '' FROM providers`); got != "cg json true true true true" {
		t.Fatalf("after up %q", got)
	}
	mustExec(t, db, `UPDATE providers SET kind = 'caleta', launch_country = 'BR', launch_operator_id = 'op' WHERE id = 'cg'`)
	for _, bad := range []string{`kind = 'hub99'`, `launch_country = 'br'`, `launch_country = 'BRA'`} {
		if _, err := db.ExecContext(ctx, `UPDATE providers SET `+bad+` WHERE id = 'cg'`); err == nil {
			t.Fatalf("%s was stored", bad)
		}
	}
	if _, err := p.DownTo(ctx, 22); err != nil {
		t.Fatalf("down to 22: %v", err)
	}
	if got := rowsText(t, db, `SELECT id, kind FROM providers`); got != "cg demo" {
		t.Fatalf("after down %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
