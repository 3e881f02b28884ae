package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/gateway"
)

// Lag reads how far the relays (relay_checkpoints) and the projections
// (readmodels.positions) are behind the event store's head, for the
// metrics. Every query is an index lookup on events' primary key.
type Lag struct {
	pool *pgxpool.Pool
}

var _ gateway.LagSource = (*Lag)(nil)

// NewLag returns the lag reader.
func NewLag(pool *pgxpool.Pool) *Lag { return &Lag{pool: pool} }

const (
	sqlLagHead   = `SELECT COALESCE(max(position), 0) FROM events`
	sqlLagRelays = `
		SELECT c.name, c.position,
			(SELECT occurred_at FROM events WHERE position = c.position),
			(SELECT occurred_at FROM events WHERE position > c.position ORDER BY position LIMIT 1)
		FROM relay_checkpoints c ORDER BY c.name`
	sqlLagProjections = `
		SELECT p.projection, p.position,
			(SELECT occurred_at FROM events WHERE position > p.position ORDER BY position LIMIT 1)
		FROM readmodels.positions p ORDER BY p.projection`
)

// Lag reads the head, every relay checkpoint and every projection
// watermark in one round trip.
func (l *Lag) Lag(ctx context.Context) (gateway.Lag, error) {
	var out gateway.Lag
	// The read models' schema may be missing (an installation without
	// them): then there is simply no projection lag.
	var hasReadModels bool
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass('readmodels.positions') IS NOT NULL`).Scan(&hasReadModels); err != nil {
		return out, fmt.Errorf("lag: %w", err)
	}
	b := &pgx.Batch{}
	b.Queue(sqlLagHead).QueryRow(func(r pgx.Row) error { return r.Scan(&out.Head) })
	b.Queue(sqlLagRelays).Query(func(rows pgx.Rows) error {
		var r gateway.RelayLag
		_, err := pgx.ForEachRow(rows, []any{&r.Name, &r.Position, &r.LastPublishedAt, &r.OldestUnpublishedAt}, func() error {
			r.LastPublishedAt, r.OldestUnpublishedAt = cloneTime(r.LastPublishedAt), cloneTime(r.OldestUnpublishedAt)
			out.Relays = append(out.Relays, r)
			return nil
		})
		return err
	})
	if hasReadModels {
		b.Queue(sqlLagProjections).Query(func(rows pgx.Rows) error {
			var p gateway.ProjectionLag
			_, err := pgx.ForEachRow(rows, []any{&p.Name, &p.Position, &p.OldestUnappliedAt}, func() error {
				p.OldestUnappliedAt = cloneTime(p.OldestUnappliedAt)
				out.Projections = append(out.Projections, p)
				return nil
			})
			return err
		})
	}
	if err := l.pool.SendBatch(ctx, b).Close(); err != nil {
		return gateway.Lag{}, fmt.Errorf("lag: %w", err)
	}
	return out, nil
}

// cloneTime copies a scanned time, so that rows scanned into the same
// variables do not share it.
func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
