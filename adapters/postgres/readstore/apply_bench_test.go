package readstore_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// BenchmarkApplyBatch applies a generated ledger to both read models in
// projector-sized batches (up to 256 events of distinct streams, in
// position order): "separate" as the two per-projection workers do (a
// transaction per projection per batch), "combined" as the combined worker
// does (one transaction per batch for both); it reports round trips and
// statements per batch besides the time. The checkpoint rows stay between
// runs (at version 0), as in a projector that has seen the streams.
// PITBOSS_BENCH_EVENTS sets the ledger's size (default 20,000):
//
//	go test -run XXX -bench ApplyBatch -benchtime 3x ./adapters/postgres/readstore
func BenchmarkApplyBatch(b *testing.B) {
	n := 20_000
	if v := os.Getenv("PITBOSS_BENCH_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	pool, url := pgtest.NewDatabase(b)
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: n, PlayersPerClient: 500, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	var batches [][]domain.Event
	rows, err := pool.Query(ctx, `SELECT body FROM events ORDER BY position`)
	if err != nil {
		b.Fatal(err)
	}
	var (
		cur  []domain.Event
		seen = map[domain.AccountID]bool{}
	)
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			b.Fatal(err)
		}
		e, err := domain.DecodeBody(body)
		if err != nil {
			b.Fatal(err)
		}
		if seen[e.StreamID] || len(cur) == 256 {
			batches, cur, seen = append(batches, cur), nil, map[domain.AccountID]bool{}
		}
		cur, seen[e.StreamID] = append(cur, e), true
	}
	if rows.Err() != nil {
		b.Fatal(rows.Err())
	}
	batches = append(batches, cur)
	var ps []projections.Projection
	for _, name := range projections.All {
		p, err := projections.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, p)
	}
	// The store's own pool counts round trips (batches) and statements.
	var count pgtest.StatementCounter
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Tracer = &count
	counted, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(counted.Close)
	rm := readstore.NewReadModels(counted)
	apply := map[string]func(batch []domain.Event) error{
		"separate": func(batch []domain.Event) error {
			for _, p := range ps {
				if _, err := rm.ApplyBatch(ctx, p, batch); err != nil {
					return err
				}
			}
			return nil
		},
		"combined": func(batch []domain.Event) error {
			_, err := rm.ApplyProjections(ctx, ps, batch)
			return err
		},
	}
	for _, mode := range []string{"separate", "combined"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				// The checkpoints are kept (at version 0), as in a projector
				// that has seen the streams: no batch makes checkpoint rows.
				if _, err := pool.Exec(ctx, `TRUNCATE readmodels.transactions, readmodels.balances, readmodels.ggr_daily,
					readmodels.ggr_players, readmodels.ggr_player_months, readmodels.ggr_rounds;
					UPDATE readmodels.checkpoints SET version = 0, position = 0`); err != nil {
					b.Fatal(err)
				}
				count.Reset()
				b.StartTimer()
				for _, batch := range batches {
					if err := apply[mode](batch); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(batches)), "batches")
			b.ReportMetric(float64(count.RoundTrips.Load())/float64(len(batches)), "roundtrips/batch")
			b.ReportMetric(float64(count.Statements.Load())/float64(len(batches)), "statements/batch")
		})
	}
}
