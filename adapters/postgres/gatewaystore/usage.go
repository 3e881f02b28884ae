package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/gateway"
)

// Usage stores API usage per client, key, minute and status class, and
// the keys' last use (migration 00004).
type Usage struct {
	pool *pgxpool.Pool
}

var _ gateway.UsageStore = (*Usage)(nil)

// NewUsage returns the usage store.
func NewUsage(pool *pgxpool.Pool) *Usage { return &Usage{pool: pool} }

// AddUsage adds counts in one transaction: rows of several processes for
// the same minute add up. Each key's last_used_at only moves forward.
func (u *Usage) AddUsage(ctx context.Context, counts []gateway.UsageCount, lastUsed map[string]time.Time) error {
	n := len(counts)
	clients, keys := make([]string, 0, n), make([]string, 0, n)
	minutes, classes, requests := make([]time.Time, 0, n), make([]int16, 0, n), make([]int64, 0, n)
	for _, c := range counts {
		clients, keys = append(clients, c.ClientID), append(keys, c.KeyID)
		minutes, classes, requests = append(minutes, c.Minute), append(classes, int16(c.StatusClass)), append(requests, c.Requests)
	}
	usedIDs, usedAt := make([]string, 0, len(lastUsed)), make([]time.Time, 0, len(lastUsed))
	for id, t := range lastUsed {
		usedIDs, usedAt = append(usedIDs, id), append(usedAt, t)
	}
	b := &pgx.Batch{}
	// Sorted so that two processes flushing the same rows lock them in the
	// same order and cannot deadlock.
	b.Queue(`
		INSERT INTO api_usage AS u (client_id, minute, key_id, status_class, requests)
		SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::smallint[], $5::bigint[])
		ORDER BY 1, 2, 3, 4
		ON CONFLICT (client_id, minute, key_id, status_class) DO UPDATE SET requests = u.requests + EXCLUDED.requests`,
		clients, minutes, keys, classes, requests)
	b.Queue(`
		UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, t.at)
		FROM (SELECT * FROM unnest($1::text[], $2::timestamptz[]) ORDER BY 1) AS t(id, at)
		WHERE k.id = t.id AND k.last_used_at IS DISTINCT FROM GREATEST(k.last_used_at, t.at)`, usedIDs, usedAt)
	if err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() }); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	return nil
}

// Usage sums q's client's (or key's) requests per bucket of q.Granularity
// in UTC; buckets without requests are left out.
func (u *Usage) Usage(ctx context.Context, q gateway.UsageQuery) ([]gateway.UsageBucket, error) {
	rows, _ := u.pool.Query(ctx, `
		SELECT date_trunc($4, minute, 'UTC') AS bucket, status_class, sum(requests)::bigint
		FROM api_usage
		WHERE client_id = $1 AND minute >= $2 AND minute < $3 AND ($5 = '' OR key_id = $5)
		GROUP BY 1, 2 ORDER BY 1, 2`, q.ClientID, q.From, q.To, q.Granularity, q.KeyID)
	var out []gateway.UsageBucket
	var (
		start time.Time
		class int16
		n     int64
	)
	_, err := pgx.ForEachRow(rows, []any{&start, &class, &n}, func() error {
		if len(out) == 0 || !out[len(out)-1].Start.Equal(start) {
			out = append(out, gateway.UsageBucket{Start: start.UTC()})
		}
		b := &out[len(out)-1]
		if class >= 1 && int(class) < len(b.ByClass) {
			b.ByClass[class] += n
		}
		b.Requests += n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", q.ClientID, err)
	}
	return out, nil
}
