package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/projections"
)

// startProjectors runs one worker per projection, each in its own consumer
// group, applying the ledger topic to the read models.
func startProjectors(ctx context.Context, g *errgroup.Group, cfg config, pool *pgxpool.Pool, log *slog.Logger) error {
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, t := range []struct {
		name       string
		partitions int32
	}{{cfg.Topic, 6}, {projector.DeadLetterTopic(cfg.Topic), 1}} {
		if err := kafka.EnsureTopic(ectx, cfg.KafkaBrokers, t.name, t.partitions, kafka.BrokerDefaultReplication); err != nil {
			return fmt.Errorf("kafka topic %s at %s: %w", t.name, strings.Join(cfg.KafkaBrokers, ","), err)
		}
	}
	store := readstore.NewReadModels(pool)
	for _, n := range projections.All {
		w, err := projector.New(store, projector.Config{Brokers: cfg.KafkaBrokers, Topic: cfg.Topic, Projection: n}, log)
		if err != nil {
			return err
		}
		g.Go(func() error { return w.Run(ctx) })
	}
	return nil
}

// readQueries are the read-model queries the API answers from.
func readQueries(pool *pgxpool.Pool) *projections.Queries { return readQueriesOn(pool, pool) }

// readQueriesOn reads the read models (history, reports and their
// watermarks) on reads — a standby, or the primary itself — and the
// ledger's head on primary. Read-your-writes holds on a standby: a read
// with min_position waits until the watermark the standby has replayed
// reaches it, and "beyond the head" is judged by the primary's head, which
// a lagging standby cannot make look short.
func readQueriesOn(primary, reads *pgxpool.Pool) *projections.Queries {
	rm := readstore.NewReadModels(reads)
	accounts := eventstore.NewAccounts(primary)
	return &projections.Queries{Transactions: rm, Reports: rm, Positions: rm, Ledger: accounts, Clients: accounts}
}
