package eventstore

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/domain"
)

func domainState(balance int64) domain.AccountState {
	return domain.AccountState{Balance: balance, Version: 1}
}

func TestParseStreamVersionKey(t *testing.T) {
	tests := []struct {
		detail  string
		stream  string
		version int64
	}{
		{"Key (stream_id, stream_version)=(player:acme:p-1:EUR, 3) already exists.", "player:acme:p-1:EUR", 3},
		{"Key (stream_id, stream_version)=(house:a:b:BTC, 12345) already exists.", "house:a:b:BTC", 12345},
		{"something else", "", 0},
		{"Key (stream_id, stream_version)=(x, y) already exists.", "x", 0},
	}
	for _, tc := range tests {
		stream, version := parseStreamVersionKey(tc.detail)
		if stream != tc.stream || version != tc.version {
			t.Errorf("parseStreamVersionKey(%q) = %q, %d; want %q, %d", tc.detail, stream, version, tc.stream, tc.version)
		}
	}
}

// The writer's own connection plans with generic plans (see postgres.GenericPlans).
func TestLedgerConnectionUsesGenericPlans(t *testing.T) {
	dsn := os.Getenv("PITBOSS_DATABASE_URL")
	if dsn == "" {
		t.Fatal("PITBOSS_DATABASE_URL is not set (make test sets it)")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	l, err := NewLedger(pool, LedgerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := l.connection(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.dropConn(0)
	var mode string
	if err := conn.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != postgres.GenericPlans {
		t.Fatalf("plan_cache_mode %q, want %q", mode, postgres.GenericPlans)
	}
	// The pool's own connections keep the server's choice.
	if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode == postgres.GenericPlans {
		t.Fatalf("the pool's connections plan with %s too: the API's queries should keep Postgres's choice", mode)
	}
}

// generations keeps at most its limit, always the entries touched last
// (half the limit), and an entry used between rotations survives any number of
// them.
func TestGenerations(t *testing.T) {
	const limit = 8
	g := newGenerations[int, int](limit)
	g.put(-1, -1) // the hot entry
	for i := range 1000 {
		g.put(i, i)
		if g.len() > limit {
			t.Fatalf("after %d puts: %d entries, over the limit %d", i+1, g.len(), limit)
		}
		// The last half of the limit's puts stay, one of them the hot
		// entry's promotion at most.
		for back := range min(i+1, limit/2-1) {
			if !g.holds(i - back) {
				t.Fatalf("after %d puts: entry %d, among the last %d, missing", i+1, i-back, limit/2-1)
			}
		}
		if _, ok := g.get(-1); !ok {
			t.Fatalf("after %d puts: the entry used after every put was dropped", i+1)
		}
	}
	if _, ok := g.get(0); ok {
		t.Error("the first entry survived 1000 puts into a cache of 8")
	}
	g.clear()
	if _, ok := g.get(999); ok || g.len() != 0 {
		t.Error("entries after clear")
	}
}

// holds reports whether k is kept, without promoting it.
func (g *generations[K, V]) holds(k K) bool {
	_, inCur := g.cur[k]
	_, inOld := g.old[k]
	return inCur || inOld
}

func TestStateCacheRebase(t *testing.T) {
	c := newStateCache(10)
	if c.at(0, nil) {
		t.Fatal("a new cache is valid")
	}
	c.rebase(5, []byte{1})
	c.accounts.put("x", domainState(7))
	c.rebase(5, []byte{1}) // same head: entries kept
	if _, ok := c.accounts.get("x"); !ok {
		t.Error("rebase at the same head dropped the entries")
	}
	c.rebase(6, []byte{2}) // another head: entries dropped
	if _, ok := c.accounts.get("x"); ok || !c.at(6, []byte{2}) {
		t.Error("rebase at a moved head kept the entries")
	}
	c.rebase(6, []byte{3}) // same position, another hash
	if c.at(6, []byte{2}) || c.accounts.len() != 0 {
		t.Error("rebase with another hash kept the old head")
	}
	c.invalidate()
	if c.valid {
		t.Error("valid after invalidate")
	}
}
