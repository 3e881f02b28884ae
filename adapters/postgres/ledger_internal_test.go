package postgres

import (
	"context"
	"fmt"
	"github.com/jackc/pgx/v5/pgxpool"
	"os"
	"testing"
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

func TestReplayPasses(t *testing.T) {
	clients := []eventClient{{"a", 5}, {"b", 60}, {"c", 30}, {"d", 20}, {"e", 120}}
	tests := []struct {
		budget int64
		want   string
	}{
		{1000, "[{[a b c d e] 235}]"},
		{100, "[{[e] 120} {[a b c] 95} {[d] 20}]"},
		{60, "[{[e] 120} {[b] 60} {[a c d] 55}]"},
		{1, "[{[e] 120} {[b] 60} {[c] 30} {[d] 20} {[a] 5}]"},
	}
	for _, tc := range tests {
		got := fmt.Sprint(replayPasses(clients, tc.budget))
		if got != tc.want {
			t.Errorf("budget %d: passes %s, want %s", tc.budget, got, tc.want)
		}
	}
}

// The writer's own connection plans with generic plans (see GenericPlans).
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
	if mode != GenericPlans {
		t.Fatalf("plan_cache_mode %q, want %q", mode, GenericPlans)
	}
	// The pool's own connections keep the server's choice.
	if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode == GenericPlans {
		t.Fatalf("the pool's connections plan with %s too: the API's queries should keep Postgres's choice", mode)
	}
}
