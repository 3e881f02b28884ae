package readstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// SwapReport tells what Swap did.
type SwapReport struct {
	// CaughtUp is the number of events the live projector had applied since
	// the rebuild's snapshot, applied to the rebuild before the swap (one
	// per projection that applied it).
	CaughtUp int
	// At the swap, the rebuild covered the events up to RebuiltHead (its
	// lowest watermark) and the store's head was LiveHead: the rebuild
	// lagged it by Behind events, BehindTime of their time (occurred_at).
	// The projectors apply what they had not applied yet after the swap.
	RebuiltHead, LiveHead, Behind int64
	BehindTime                    time.Duration
	// Prepare is the time the shadow tables' keys, indexes and vacuums
	// took (0 if an earlier Swap had made them), Took the whole Swap's.
	Prepare, Took time.Duration
}

// SwapOptions are Swap's settings.
type SwapOptions struct {
	// Progress, when set, is called as the shadow tables' keys, indexes
	// and vacuums are done (done of total), before the swap's lock.
	Progress func(done, total int)
}

// ErrNoShadow is returned by Swap when there is no rebuilt schema.
var ErrNoShadow = errors.New("no rebuilt read models to swap in: run a rebuild with Shadow first")

// Swap makes the shadow schema the live read models, atomically. In one
// transaction it blocks the projectors' writes (they wait, then carry on
// against the new tables), applies to the shadow tables every event the live
// checkpoints have and the shadow's do not (what the projectors did since
// the rebuild's snapshot), moves the shadow's watermarks, and renames the
// schemas. Queries never see a half-swapped state.
func (m *ReadModels) Swap(ctx context.Context, opts SwapOptions) (SwapReport, error) {
	var rep SwapReport
	start := time.Now()
	state, err := m.shadowState(ctx, m.pool)
	if err != nil {
		return rep, err
	}
	switch state {
	case shadowWritten:
		if err := m.prepareShadow(ctx, opts.Progress); err != nil {
			return rep, err
		}
		rep.Prepare = time.Since(start)
	case shadowReady:
	default:
		return rep, ErrNoShadow
	}
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return rep, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if state, err := m.shadowState(ctx, tx); err != nil {
		return rep, err
	} else if state != shadowReady {
		return rep, ErrNoShadow // another swap took it meanwhile
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+m.t("checkpoints")+` IN EXCLUSIVE MODE`); err != nil {
		return rep, fmt.Errorf("lock live checkpoints: %w", err)
	}
	shadow := newReadModelsIn(m.pool, ShadowSchema)
	var lagSeconds float64
	if err := tx.QueryRow(ctx, `SELECT s.head, coalesce(l.position, 0), (SELECT count(*) FROM events WHERE position > s.head),
		coalesce(extract(epoch FROM l.occurred_at - coalesce(e.occurred_at, f.occurred_at)), 0)::float8
		FROM (SELECT coalesce(min(position), 0) AS head FROM `+shadow.t("positions")+`) s
		LEFT JOIN events e ON e.position = s.head
		LEFT JOIN LATERAL (SELECT position, occurred_at FROM events ORDER BY position DESC LIMIT 1) l ON true
		LEFT JOIN LATERAL (SELECT occurred_at FROM events ORDER BY position LIMIT 1) f ON true`).
		Scan(&rep.RebuiltHead, &rep.LiveHead, &rep.Behind, &lagSeconds); err != nil {
		return rep, fmt.Errorf("measure the rebuild's lag: %w", err)
	}
	rep.BehindTime = time.Duration(lagSeconds * float64(time.Second)).Round(time.Microsecond)
	if rep.CaughtUp, err = m.catchUp(ctx, tx, shadow); err != nil {
		return rep, err
	}
	for _, p := range projections.All {
		for {
			_, more, err := shadow.advanceStep(ctx, tx, p, false)
			if err != nil {
				return rep, err
			}
			if !more {
				break
			}
		}
	}
	old := pgx.Identifier{ReadModelSchema + "_old"}.Sanitize()
	for _, stmt := range []string{
		`COMMENT ON SCHEMA ` + pgx.Identifier{ShadowSchema}.Sanitize() + ` IS NULL`,
		`ALTER SCHEMA ` + pgx.Identifier{m.schema}.Sanitize() + ` RENAME TO ` + old,
		`ALTER SCHEMA ` + pgx.Identifier{ShadowSchema}.Sanitize() + ` RENAME TO ` + pgx.Identifier{m.schema}.Sanitize(),
		`DROP SCHEMA ` + old + ` CASCADE`,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return rep, fmt.Errorf("swap schemas: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rep, fmt.Errorf("commit swap: %w", err)
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// catchUp applies to shadow, in tx (which holds the live checkpoints'
// lock), the events the live projectors applied after the rebuild's
// snapshot: per projection and stream, the versions its live checkpoint is
// ahead of the shadow's. It returns how many it applied (one per
// projection that applied an event).
func (m *ReadModels) catchUp(ctx context.Context, tx pgx.Tx, shadow *ReadModels) (caught int, err error) {
	rows, _ := tx.Query(ctx, `SELECT l.projection, l.stream_id, coalesce(s.version, 0), l.version
		FROM `+m.t("checkpoints")+` l LEFT JOIN `+shadow.t("checkpoints")+` s USING (projection, stream_id)
		WHERE l.version > coalesce(s.version, 0) ORDER BY l.projection, l.stream_id`)
	type behind struct {
		p        projections.Name
		stream   string
		from, to int64
	}
	lag, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (behind, error) {
		var b behind
		var p string
		err := r.Scan(&p, &b.stream, &b.from, &b.to)
		b.p = projections.Name(p)
		return b, err
	})
	if err != nil {
		return caught, fmt.Errorf("compare checkpoints: %w", err)
	}
	for _, b := range lag {
		proj, err := projections.ByName(b.p)
		if err != nil {
			return caught, err
		}
		rows, _ := tx.Query(ctx, `SELECT position, stream_version, body FROM events
			WHERE stream_id = $1 AND stream_version > $2 AND stream_version <= $3 ORDER BY stream_version`, b.stream, b.from, b.to)
		evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rawEvent, error) {
			var e rawEvent
			err := r.Scan(&e.position, &e.version, &e.body)
			return e, err
		})
		if err != nil {
			return caught, fmt.Errorf("read events of %s: %w", b.stream, err)
		}
		for _, raw := range evs {
			e, err := domain.DecodeBody(raw.body)
			if err == nil {
				_, err = shadow.applyOn(ctx, tx, proj, e)
				if err != nil && !errors.Is(err, projections.ErrInvalidEvent) {
					return caught, fmt.Errorf("catch up %s of %s at version %d: %w", b.p, b.stream, raw.version, err)
				}
			}
			if err != nil {
				// The live projector dead-lettered it: so does the rebuild.
				if _, err := tx.Exec(ctx, shadow.sql.skipCheckpoint, string(b.p), b.stream, raw.version, raw.position); err != nil {
					return caught, fmt.Errorf("skip %s of %s: %w", b.p, b.stream, err)
				}
			}
			caught++
		}
	}
	return caught, nil
}
