package postgres

import (
	"bytes"
	"context"
	"fmt"
	"github.com/jackc/pgx/v5/pgxpool"
	"os"
	"testing"
)

func TestParseUUID(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		ok   bool
	}{
		{in: "00112233-4455-6677-8899-aabbccddeeff", ok: true,
			want: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
		{in: "00112233-4455-6677-8899-AABBCCDDEEFF", ok: true,
			want: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
		{in: "", ok: false},
		{in: "00112233445566778899aabbccddeeff", ok: false},
		{in: "00112233-4455-6677-8899-aabbccddeefg", ok: false},
		{in: "00112233-4455-6677-8899_aabbccddeeff", ok: false},
		{in: "0011223-34455-6677-8899-aabbccddeeff", ok: false},
		{in: "00112233-4455-6677-8899-aabbccddeeff0", ok: false},
	}
	for _, tc := range tests {
		got, ok := parseUUID(tc.in)
		if ok != tc.ok || (ok && !bytes.Equal(got[:], tc.want)) {
			t.Errorf("parseUUID(%q) = %x, %v; want %x, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
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

// The writer's own connection plans with generic plans (see genericPlans).
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
	if mode != genericPlans {
		t.Fatalf("plan_cache_mode %q, want %q", mode, genericPlans)
	}
	// The pool's own connections keep the server's choice.
	if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode == genericPlans {
		t.Fatalf("the pool's connections plan with %s too: the API's queries should keep Postgres's choice", mode)
	}
}
