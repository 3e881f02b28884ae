package postgres_test

import (
	"testing"
)

// Migration 00022 turns the flat rates of commission_rates into flat deal
// versions (the report reads nothing else), keeps them append-only, and
// its Down gives the flat rates back.
func TestMigrationCommissionDeals(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 16)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO commission_rates (provider, client_id, rate, valid_from) VALUES
		('prov', NULL, 0.10, '2025-01-01'), ('prov', 'acme', 0.2, '2025-03-02'), ('other', NULL, 0.055, '2025-02-01')`)
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := rowsText(t, db, `SELECT provider, client_id, valid_from::text, kind, rate::text, actor FROM commission_deals ORDER BY id`); got !=
		"prov  2025-01-01 flat 0.100000 migration:00022|prov acme 2025-03-02 flat 0.200000 migration:00022|other  2025-02-01 flat 0.055000 migration:00022" {
		t.Fatalf("deals %q", got)
	}
	if got := rowsText(t, db, `SELECT to_regclass('commission_rates') IS NULL`); got != "true" {
		t.Fatalf("commission_rates still there: %s", got)
	}
	for _, stmt := range []string{`UPDATE commission_deals SET rate = 0.5`, `DELETE FROM commission_deals`, `TRUNCATE commission_deals`} {
		if _, err := db.ExecContext(ctx, stmt); err == nil {
			t.Errorf("%s: allowed on an append-only table", stmt)
		}
	}
	mustExec(t, db, `INSERT INTO commission_deals (provider, client_id, valid_from, kind, rate, actor) VALUES ('prov', 'acme', '2025-03-02', 'flat', 0.25, 'x')`)
	if _, err := p.DownTo(ctx, 16); err != nil {
		t.Fatalf("down: %v", err)
	}
	if got := rowsText(t, db, `SELECT provider, coalesce(client_id, '-'), valid_from::text, rate::text FROM commission_rates ORDER BY 1, 2`); got !=
		"other - 2025-02-01 0.055000|prov - 2025-01-01 0.100000|prov acme 2025-03-02 0.250000" {
		t.Fatalf("rates after down %q", got)
	}
}
