package gatewaystore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/wallet"
)

// FollowUps is the durable queue of the seamless wallet's unknown
// outcomes (migration 00030, wallet.FollowUpQueue): one row per client,
// action and movement id; rows stay, settled, as the record of what was
// sent.
type FollowUps struct{ pool *pgxpool.Pool }

// NewFollowUps returns the queue over pool.
func NewFollowUps(pool *pgxpool.Pool) *FollowUps { return &FollowUps{pool: pool} }

var _ wallet.FollowUpQueue = (*FollowUps)(nil)

// Enqueue adds f; the same client, action and movement id again is a
// no-op.
func (q *FollowUps) Enqueue(ctx context.Context, f wallet.FollowUp) error {
	payload, err := json.Marshal(f.Call)
	if err != nil {
		return fmt.Errorf("encode follow-up: %w", err)
	}
	_, err = q.pool.Exec(ctx, `
		INSERT INTO seamless_followups (client_id, move_id, kind, payload, next_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (client_id, kind, move_id) DO NOTHING`,
		f.ClientID, f.Call.MoveID, f.Action, payload, f.NextAt)
	if err != nil {
		return fmt.Errorf("enqueue follow-up %s of %s: %w", f.Action, f.Call.MoveID, err)
	}
	return nil
}

// Voided reports whether the client's debit id has a cancel follow-up.
func (q *FollowUps) Voided(ctx context.Context, clientID, moveID string) (bool, error) {
	var ok bool
	err := q.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM seamless_followups WHERE client_id = $1 AND kind = $2 AND move_id = $3)`,
		clientID, wallet.ActionCancel, moveID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("is %s voided: %w", moveID, err)
	}
	return ok, nil
}

const followUpColumns = `id, client_id, kind, payload, attempts, next_at, last_error, created_at`

func scanFollowUp(row pgx.CollectableRow) (wallet.FollowUp, error) {
	var (
		f       wallet.FollowUp
		payload []byte
	)
	if err := row.Scan(&f.ID, &f.ClientID, &f.Action, &payload, &f.Attempts, &f.NextAt, &f.LastError, &f.CreatedAt); err != nil {
		return f, err
	}
	if err := json.Unmarshal(payload, &f.Call); err != nil {
		return f, fmt.Errorf("follow-up %d payload: %w", f.ID, err)
	}
	return f, nil
}

// Claim takes up to limit unsettled follow-ups due at now, oldest first,
// moving each one's next attempt lease ahead so another runner skips it.
func (q *FollowUps) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]wallet.FollowUp, error) {
	rows, _ := q.pool.Query(ctx, `
		UPDATE seamless_followups f SET next_at = $2
		FROM (SELECT id FROM seamless_followups WHERE done_at IS NULL AND next_at <= $1
		      ORDER BY next_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) due
		WHERE f.id = due.id
		RETURNING f.id, f.client_id, f.kind, f.payload, f.attempts, f.next_at, f.last_error, f.created_at`,
		now, now.Add(lease), limit)
	out, err := pgx.CollectRows(rows, scanFollowUp)
	if err != nil {
		return nil, fmt.Errorf("claim follow-ups: %w", err)
	}
	return out, nil
}

// Finish marks a follow-up settled.
func (q *FollowUps) Finish(ctx context.Context, id int64, outcome string, at time.Time) error {
	_, err := q.pool.Exec(ctx, `
		UPDATE seamless_followups SET done_at = $2, outcome = $3, attempts = attempts + 1 WHERE id = $1`, id, at, outcome)
	if err != nil {
		return fmt.Errorf("finish follow-up %d: %w", id, err)
	}
	return nil
}

// Retry counts a failed attempt and sets the next.
func (q *FollowUps) Retry(ctx context.Context, id int64, next time.Time, lastErr string) error {
	if len(lastErr) > 500 {
		lastErr = lastErr[:500]
	}
	_, err := q.pool.Exec(ctx, `
		UPDATE seamless_followups SET next_at = $2, last_error = $3, attempts = attempts + 1 WHERE id = $1`,
		id, next, lastErr)
	if err != nil {
		return fmt.Errorf("retry follow-up %d: %w", id, err)
	}
	return nil
}

// List is one page of follow-ups, newest first; pending only when
// pendingOnly; of one client when clientID is not empty.
func (q *FollowUps) List(ctx context.Context, clientID string, pendingOnly bool, limit, offset int) ([]wallet.FollowUpRecord, error) {
	rows, _ := q.pool.Query(ctx, `
		SELECT `+followUpColumns+`, outcome, done_at FROM seamless_followups
		WHERE ($1 = '' OR client_id = $1) AND (NOT $2 OR done_at IS NULL)
		ORDER BY id DESC LIMIT $3 OFFSET $4`, clientID, pendingOnly, limit, offset)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (wallet.FollowUpRecord, error) {
		var (
			v       wallet.FollowUpRecord
			payload []byte
		)
		err := row.Scan(&v.ID, &v.ClientID, &v.Action, &payload, &v.Attempts, &v.NextAt, &v.LastError, &v.CreatedAt,
			&v.Outcome, &v.DoneAt)
		if err == nil {
			err = json.Unmarshal(payload, &v.Call)
		}
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("list follow-ups: %w", err)
	}
	return out, nil
}

// Pending is how many follow-ups are unsettled and when the oldest was
// queued (zero when none).
func (q *FollowUps) Pending(ctx context.Context) (int64, time.Time, error) {
	var (
		n      int64
		oldest *time.Time
	)
	if err := q.pool.QueryRow(ctx, `
		SELECT count(*), min(created_at) FROM seamless_followups WHERE done_at IS NULL`).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("pending follow-ups: %w", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, *oldest, nil
}
