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

// startProjectors runs the projector role's workers: one combined worker
// for every projection, or one per projection (PITBOSS_PROJECTOR_MODE).
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
	cfgs, err := projector.RoleConfigs(cfg.ProjectorMode, cfg.KafkaBrokers, cfg.Topic)
	if err != nil {
		return err
	}
	for _, c := range cfgs {
		c.FetchWait = cfg.ConsumerFetchWait
		// The partitions one fetch woke share a transaction.
		c.Gather = projectorGather
		w, err := projector.New(store, c, log)
		if err != nil {
			return err
		}
		g.Go(func() error { return w.Run(ctx) })
	}
	return nil
}

// projectorGather is how long the projector's small rounds wait for the
// other partitions' rounds of the same fetch (projector.Config.Gather):
// they are woken within a millisecond of each other. It does not depend
// on a held fetch: one relay transaction spans the partitions, and a fetch
// that sees it sees them all.
const projectorGather = 2 * time.Millisecond

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
	return &projections.Queries{Transactions: rm, Reports: rm, Rounds: rm, Positions: rm, Ledger: accounts, Clients: accounts}
}
