package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/gateway"
)

// RateWindows is the shared rate-limit store (PITBOSS_RATE_LIMIT_STORE=
// postgres): one row per key in the UNLOGGED table rate_limit_windows,
// counted by one upsert per request, so every API process sees the same
// window. It costs a database round trip per request; see
// docs/keys-and-admin.md for the measurements.
type RateWindows struct {
	pool *pgxpool.Pool
}

var _ gateway.RateStore = (*RateWindows)(nil)

// NewRateWindows returns the store.
func NewRateWindows(pool *pgxpool.Pool) *RateWindows { return &RateWindows{pool: pool} }

// The window semantics are gateway.MemoryRateStore's (both run the
// contract gatewaytest.RunRateStore): a window starts at the key's first
// request after the previous one ended, a shortened tier ends a running
// window early, and counting stops one past the limit. now is the caller's
// clock, as in the memory store.
const sqlTakeRate = `
INSERT INTO rate_limit_windows AS w (key_id, resets_at, count) VALUES ($1, $2::timestamptz + $3 * interval '1 microsecond', 1)
ON CONFLICT (key_id) DO UPDATE SET
    count     = CASE WHEN w.resets_at <= $2 THEN 1 ELSE LEAST(w.count + 1, $4 + 1) END,
    resets_at = CASE WHEN w.resets_at <= $2 THEN EXCLUDED.resets_at ELSE LEAST(w.resets_at, EXCLUDED.resets_at) END
RETURNING count, resets_at`

// Take counts one request of key at now.
func (r *RateWindows) Take(ctx context.Context, key string, tier gateway.RateTier, now time.Time) (gateway.RateDecision, error) {
	var (
		count   int
		resetAt time.Time
	)
	err := r.pool.QueryRow(ctx, sqlTakeRate, key, now, tier.Window.Microseconds(), tier.Limit).Scan(&count, &resetAt)
	if err != nil {
		return gateway.RateDecision{}, fmt.Errorf("rate window of key %s: %w", key, err)
	}
	return tier.Decide(count, resetAt), nil
}
