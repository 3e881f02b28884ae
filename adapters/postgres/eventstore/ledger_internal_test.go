package eventstore

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
)

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
	conn, err := l.connection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.dropConn()
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
