package readstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
)

// Every body of a generated ledger decodes to the event it encodes: a
// rebuild reads back exactly what the ledger wrote. (That such bodies take
// DecodeBody's fast path is domain's TestDecodeCanonicalTakesWhatEncodeBodyWrites.)
func TestSeededBodiesDecode(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: 2000, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies(t, pool) {
		e, err := domain.DecodeBody(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		again, err := domain.EncodeBody(e)
		if err != nil {
			t.Fatalf("encode %+v: %v", e, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("decoded and encoded again:\n%s\nstored:\n%s", again, b)
		}
	}
}

func bodies(t testing.TB, pool *pgxpool.Pool) [][]byte {
	t.Helper()
	rows, _ := pool.Query(context.Background(), `SELECT body FROM events ORDER BY position`)
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkDecodeSeededBodies decodes the bodies of a generated ledger (the
// mix of deposits, transfers, launches, bets, wins, rollbacks and
// adjustments a rebuild reads), reporting the time per event.
func BenchmarkDecodeSeededBodies(b *testing.B) {
	pool, _ := pgtest.NewDatabase(b)
	if _, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: 20_000, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	bs := bodies(b, pool)
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range bs {
			if _, err := domain.DecodeBody(x); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bs)), "ns/event")
}
