package auditstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
)

// ExportRange selects the events to export: by position (both ends
// inclusive, 0 = open) or by time (From inclusive, To exclusive, zero =
// open), not both. A time range becomes the contiguous position range from
// the first event that occurred at or after From to the last that occurred
// before To, so an export is always an unbroken piece of the chain even
// when clocks of several writers disagree a little.
type ExportRange struct {
	FromPosition, ToPosition int64
	From, To                 time.Time
	// BatchSize is the events read per round trip. Default 2000.
	BatchSize int
}

// ExportSummary tells what Export wrote: the first event's prev_hash
// anchors the piece to the chain before it, the last hash to the chain
// after it.
type ExportSummary struct {
	Events        int64
	FirstPosition int64
	LastPosition  int64
	FirstPrevHash []byte
	LastHash      []byte
	HeadPosition  int64 // the store's head when the export began
}

// Export streams the selected events, in position order, to emit, all from
// one snapshot.
func (a *Audit) Export(ctx context.Context, rng ExportRange, emit func(audit.Record) error) (ExportSummary, error) {
	var sum ExportSummary
	byPos := rng.FromPosition != 0 || rng.ToPosition != 0
	byTime := !rng.From.IsZero() || !rng.To.IsZero()
	switch {
	case byPos && byTime:
		return sum, fmt.Errorf("export: give a position range or a time range, not both: %w", domain.ErrInvalidArgument)
	case rng.FromPosition < 0 || rng.ToPosition < 0:
		return sum, fmt.Errorf("export: positions must not be negative: %w", domain.ErrInvalidArgument)
	case rng.ToPosition != 0 && rng.ToPosition < rng.FromPosition:
		return sum, fmt.Errorf("export: to-position %d is before from-position %d: %w", rng.ToPosition, rng.FromPosition, domain.ErrInvalidArgument)
	case !rng.To.IsZero() && !rng.From.IsZero() && !rng.To.After(rng.From):
		return sum, fmt.Errorf("export: to %s is not after from %s: %w", rng.To.Format(time.RFC3339), rng.From.Format(time.RFC3339), domain.ErrInvalidArgument)
	}
	if rng.BatchSize <= 0 {
		rng.BatchSize = 2000
	}
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return sum, fmt.Errorf("begin snapshot: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&sum.HeadPosition); err != nil {
		return sum, fmt.Errorf("read chain head: %w", err)
	}
	from, to := rng.FromPosition, rng.ToPosition
	if from > 0 {
		from-- // the keyset reads after it
	}
	if to == 0 {
		to = math.MaxInt64
	}
	if byTime {
		var lo, hi *int64
		if err := tx.QueryRow(ctx, `
SELECT (SELECT min(position) FROM events WHERE $1::timestamptz IS NULL OR occurred_at >= $1),
       (SELECT max(position) FROM events WHERE $2::timestamptz IS NULL OR occurred_at < $2)`,
			nullTime(rng.From), nullTime(rng.To)).Scan(&lo, &hi); err != nil {
			return sum, fmt.Errorf("find the positions of the time range: %w", err)
		}
		if lo == nil || hi == nil || *hi < *lo {
			return sum, tx.Commit(ctx)
		}
		from, to = *lo-1, *hi
	}
	recs := make([]audit.Record, 0, rng.BatchSize)
	for {
		recs, err = readEvents(ctx, tx, from, to, rng.BatchSize, recs[:0])
		if err != nil {
			return sum, err
		}
		for _, r := range recs {
			if sum.Events == 0 {
				sum.FirstPosition, sum.FirstPrevHash = r.Position, r.PrevHash
			}
			sum.Events++
			sum.LastPosition, sum.LastHash = r.Position, r.Hash
			if err := emit(r); err != nil {
				return sum, err
			}
		}
		if len(recs) < rng.BatchSize {
			break
		}
		from = recs[len(recs)-1].Position
	}
	return sum, tx.Commit(ctx)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// sqlClientEvents reads a page of the client's events in position order
// on events_client_position_idx (postgres.ClientEventsAfter). The body's
// client_id must agree, so an event is only ever shown to the client it is
// about.
var sqlClientEvents = postgres.ClientEventsAfter(recordColumns, "$1", "$2::bigint", "$3")

// sqlClientHead is the client's last event: its position and hash (the
// chain's hash at that position), walked backwards on the client index
// (postgres.ClientEventAtOrBefore), so it reads one row of the client's.
var sqlClientHead = postgres.ClientEventAtOrBefore("position, hash", "$1", "9223372036854775807::bigint")

// ClientEvents implements audit.Log.
func (a *Audit) ClientEvents(ctx context.Context, clientID string, after int64, limit int) (audit.Page, error) {
	var page audit.Page
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return page, fmt.Errorf("begin snapshot: %w", err)
	}
	defer tx.Rollback(ctx)
	err = tx.QueryRow(ctx, sqlClientHead, clientID).Scan(&page.HeadPosition, &page.HeadHash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return page, fmt.Errorf("read the head of %s: %w", clientID, err)
	}
	rows, err := tx.Query(ctx, sqlClientEvents, clientID, after, limit)
	if err != nil {
		return page, fmt.Errorf("read events of %s: %w", clientID, err)
	}
	page.Events, err = appendRecords(rows, page.Events)
	if err != nil {
		return page, fmt.Errorf("read events of %s: %w", clientID, err)
	}
	return page, tx.Commit(ctx)
}
