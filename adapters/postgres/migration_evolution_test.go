package postgres_test

import "testing"

// Migration 00021 adds the evolution wallet protocol to the providers'
// check, which still refuses any other; its Down moves evolution
// providers back to pitboss (the older check does not know evolution).
func TestMigrationEvolutionWalletProtocol(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 20)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled) VALUES ('evo', 'Evo', 's', true)`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = 'evolution' WHERE id = 'evo'`); err == nil {
		t.Fatal("evolution was stored before migration 00021")
	}
	if _, err := p.UpTo(ctx, 28); err != nil {
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `UPDATE providers SET wallet_protocol = 'evolution' WHERE id = 'evo'`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = 'hub99' WHERE id = 'evo'`); err == nil {
		t.Fatal("protocol hub99 was stored")
	}
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatalf("down to 20 again: %v", err)
	}
	if got := rowsText(t, db, `SELECT id, wallet_protocol FROM providers`); got != "evo pitboss" {
		t.Fatalf("after down: %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Migration 00029 leaves the protocol to Go (gateway.CheckWalletProtocol):
// a name the database never heard of is stored, an empty one is not, and
// its Down moves a provider on a protocol the older check does not know
// back to pitboss.
func TestMigrationWalletProtocolAsData(t *testing.T) {
	t.Parallel()
	p, db := migratedDownTo(t, 28)
	ctx := t.Context()
	mustExec(t, db, `INSERT INTO providers (id, name, secret, enabled) VALUES ('fifth', 'Fifth', 's', true)`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = 'tbb' WHERE id = 'fifth'`); err == nil {
		t.Fatal("tbb was stored before migration 00029")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	mustExec(t, db, `UPDATE providers SET wallet_protocol = 'tbb' WHERE id = 'fifth'`)
	if _, err := db.ExecContext(ctx, `UPDATE providers SET wallet_protocol = '' WHERE id = 'fifth'`); err == nil {
		t.Fatal("an empty protocol was stored")
	}
	if _, err := p.DownTo(ctx, 28); err != nil {
		t.Fatalf("down to 28: %v", err)
	}
	if got := rowsText(t, db, `SELECT id, wallet_protocol FROM providers`); got != "fifth pitboss" {
		t.Fatalf("after down: %q", got)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
