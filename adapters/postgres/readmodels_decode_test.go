package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
)

// sameAsDecodeBody checks that decodeEvent gives exactly what the domain's
// decoder gives, error or not.
func sameAsDecodeBody(t *testing.T, b []byte) {
	t.Helper()
	want, werr := domain.DecodeBody(b)
	got, gerr := postgres.DecodeEventForTest(b)
	if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("body %q:\ndecodeEvent %+v, %v\nDecodeBody  %+v, %v", b, got, gerr, want, werr)
	}
}

// Every body of a generated ledger takes the fast path and decodes the same.
func TestDecodeEventMatchesDecodeBody(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := postgres.SeedEvents(context.Background(), pool, postgres.SeedOptions{Events: 2000, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies(t, pool) {
		if !postgres.FastDecodeForTest(b) {
			t.Fatalf("a canonical body took the slow path: %s", b)
		}
		sameAsDecodeBody(t, b)
	}
}

func bodies(t *testing.T, pool *pgxpool.Pool) [][]byte {
	t.Helper()
	rows, _ := pool.Query(context.Background(), `SELECT body FROM events ORDER BY position`)
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var decodeSeeds = []string{
	`{"position":3,"id":"00000000-0000-4000-8000-000000000003","type":"wallet.bet_placed.v1","stream_id":"player:c:p:EUR","version":2,"occurred_at":"2025-03-01T10:00:00.000004Z","data":{"client_id":"c","player_id":"p","provider":"x","currency":"EUR","amount":"1.00","round_closed":true,"promo":true,"postings":[{"account":"player:c:p:EUR","amount":"-1.00"},{"account":"house:c:x:EUR","amount":"1.00"}]},"meta":{"request_id":"r","correlation_id":"c","actor":"a"}}`,
	`{"position":1,"id":"a","type":"t","stream_id":"s","version":1,"occurred_at":"2025-03-01T10:00:00Z","data":{"client_id":"caf\u00e9 \ud83d\ude00 \\ \" \/ \b\f\n\r\t","currency":"EUR","amount":"0","postings":[]},"meta":{}}`,
	`{"position":1,"id":"a","type":"t","stream_id":"s","version":1,"occurred_at":"2025-03-01T10:00:00Z","data":{"reason":"lone \ud800 and \udc00\u0041","postings":null},"meta":{}}`,
	`{"Position":1,"id":"a","occurred_at":"2025-03-01T10:00:00Z","data":{},"meta":{}}`,
	`{"position":01,"occurred_at":"2025-03-01T10:00:00Z"}`,
	`{"position":1.5,"occurred_at":"2025-03-01T10:00:00Z"}`,
	`{"position":1,"occurred_at":"2025-03-01T10:00:00Z"} x`,
	`{"position":1,"occurred_at":"yesterday"}`,
	"{\"id\":\"\xff\",\"occurred_at\":\"2025-03-01T10:00:00Z\"}",
	`{"id":"a","id":"b","occurred_at":"2025-03-01T10:00:00Z","data":{"postings":[{"account":"x"}],"postings":[{"amount":"1"}]}}`,
	`[]`, ``, `{`, `{"position":`, `{"id":"\u12"}`,
}

func TestDecodeEventEdgeCases(t *testing.T) {
	for _, s := range decodeSeeds {
		sameAsDecodeBody(t, []byte(s))
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameAsDecodeBody(t, b) })
}
