package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/gateway"
)

// Lag reads how far the relays (relay_checkpoints) and the projections
// (readmodels.positions) are behind the event store's head, for the
// metrics. Every query is an index lookup on events' primary key.
type Lag struct {
	pool *pgxpool.Pool
}

var (
	_ gateway.LagSource       = (*Lag)(nil)
	_ gateway.ClientLagSource = (*Lag)(nil)
)

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
	for i := range out.Relays {
		out.Relays[i].BehindEvents = max(0, out.Head-out.Relays[i].Position)
	}
	for i := range out.Projections {
		out.Projections[i].BehindEvents = max(0, out.Head-out.Projections[i].Position)
	}
	return out, nil
}

// clientEvents selects one client's events, as the audit export does: the
// stream id names the client (events_client_position_idx) and the body
// agrees. $1 is the client id.
const clientEvents = `split_part(stream_id, ':', 2) = $1 AND body->'data'->>'client_id' = $1`

var (
	sqlClientLagHead   = `SELECT COALESCE((` + postgres.ClientEventAtOrBefore("position", "$1", "9223372036854775807::bigint") + `), 0)`
	sqlClientLagRelays = `
		SELECT c.name, COALESCE(last.position, 0), last.occurred_at,
			(` + postgres.ClientEventsAfter("occurred_at", "$1", "c.position", "1") + `),
			(SELECT count(*) FROM events WHERE ` + clientEvents + ` AND position > c.position)
		FROM relay_checkpoints c
		LEFT JOIN LATERAL (` + postgres.ClientEventAtOrBefore("position, occurred_at", "$1", "c.position") + `) last ON true
		ORDER BY c.name`
	sqlClientLagProjections = `
		SELECT p.projection,
			COALESCE((` + postgres.ClientEventAtOrBefore("position", "$1", "p.position") + `), 0),
			(` + postgres.ClientEventsAfter("occurred_at", "$1", "p.position", "1") + `),
			(SELECT count(*) FROM events WHERE ` + clientEvents + ` AND position > p.position)
		FROM readmodels.positions p ORDER BY p.projection`
)

// ClientLag reads the lags as clientID is shown them (docs/console.md):
// the head is its last event; each relay's and projection's position is its
// last event at or below the checkpoint; BehindEvents counts its events
// after the checkpoint and the oldest waiting time is its oldest such
// event. Every query walks the client's rows of events_client_position_idx.
func (l *Lag) ClientLag(ctx context.Context, clientID string) (gateway.Lag, error) {
	var out gateway.Lag
	var hasReadModels bool
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass('readmodels.positions') IS NOT NULL`).Scan(&hasReadModels); err != nil {
		return out, fmt.Errorf("lag of %s: %w", clientID, err)
	}
	b := &pgx.Batch{}
	b.Queue(sqlClientLagHead, clientID).QueryRow(func(r pgx.Row) error { return r.Scan(&out.Head) })
	b.Queue(sqlClientLagRelays, clientID).Query(func(rows pgx.Rows) error {
		var r gateway.RelayLag
		_, err := pgx.ForEachRow(rows, []any{&r.Name, &r.Position, &r.LastPublishedAt, &r.OldestUnpublishedAt, &r.BehindEvents}, func() error {
			r.LastPublishedAt, r.OldestUnpublishedAt = cloneTime(r.LastPublishedAt), cloneTime(r.OldestUnpublishedAt)
			out.Relays = append(out.Relays, r)
			return nil
		})
		return err
	})
	if hasReadModels {
		b.Queue(sqlClientLagProjections, clientID).Query(func(rows pgx.Rows) error {
			var p gateway.ProjectionLag
			_, err := pgx.ForEachRow(rows, []any{&p.Name, &p.Position, &p.OldestUnappliedAt, &p.BehindEvents}, func() error {
				p.OldestUnappliedAt = cloneTime(p.OldestUnappliedAt)
				out.Projections = append(out.Projections, p)
				return nil
			})
			return err
		})
	}
	if err := l.pool.SendBatch(ctx, b).Close(); err != nil {
		return gateway.Lag{}, fmt.Errorf("lag of %s: %w", clientID, err)
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
