package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// Exchange rates (migration 00015, docs/reporting-currency.md).

var (
	_ projections.FXRates = (*Gateway)(nil)
	_ gateway.FXRates     = (*Gateway)(nil)
)

// UpsertFXRates stores rates in one statement: a rate of a pair and day
// already stored is replaced. It returns how many rows were written.
func (g *Gateway) UpsertFXRates(ctx context.Context, rates []domain.FXRate) (int64, error) {
	if len(rates) == 0 {
		return 0, nil
	}
	bases, quotes, days, values := make([]string, len(rates)), make([]string, len(rates)), make([]time.Time, len(rates)),
		make([]string, len(rates))
	for i, r := range rates {
		bases[i], quotes[i], days[i], values[i] = r.Base, r.Quote, r.Day, r.Rate
	}
	tag, err := g.pool.Exec(ctx, `
INSERT INTO fx_rates (base, quote, day, rate, updated_at)
SELECT b, q, d, r::numeric, now() FROM unnest($1::text[], $2::text[], $3::date[], $4::text[]) AS t(b, q, d, r)
ON CONFLICT (base, quote, day) DO UPDATE SET rate = EXCLUDED.rate, updated_at = EXCLUDED.updated_at
 WHERE fx_rates.rate <> EXCLUDED.rate`, bases, quotes, days, values)
	if err != nil {
		return 0, fmt.Errorf("store %d exchange rates: %w", len(rates), err)
	}
	return tag.RowsAffected(), nil
}

// fxRate reads a row of (base, quote, day, rate::text, updated_at).
func fxRate(row pgx.CollectableRow) (domain.FXRate, error) {
	var r domain.FXRate
	var updated time.Time
	err := row.Scan(&r.Base, &r.Quote, &r.Day, &r.Rate, &updated)
	if err == nil {
		var v, perr = domain.ParseRate(r.Rate)
		if perr != nil {
			return r, fmt.Errorf("stored rate %s/%s on %s: %w", r.Base, r.Quote, r.Day.Format(time.DateOnly), perr)
		}
		r.Rate = domain.FormatRate(v) // numeric's text keeps trailing zeros
	}
	return r, err
}

// ListFXRates is a page of rates, by base, quote and day, with the total.
func (g *Gateway) ListFXRates(ctx context.Context, f gateway.FXRateFilter, page, perPage int) ([]domain.FXRate, int64, error) {
	const where = `($1 = '' OR base = $1) AND ($2 = '' OR quote = $2)
  AND ($3::date IS NULL OR day >= $3) AND ($4::date IS NULL OR day <= $4)`
	args := []any{f.Base, f.Quote, nullDay(f.From), nullDay(f.To)}
	var total int64
	if err := g.pool.QueryRow(ctx, `SELECT count(*) FROM fx_rates WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count exchange rates: %w", err)
	}
	rows, _ := g.pool.Query(ctx, `SELECT base, quote, day, rate::text, updated_at FROM fx_rates WHERE `+where+`
 ORDER BY base COLLATE "C", quote COLLATE "C", day LIMIT $5 OFFSET $6`, append(args, perPage, (page-1)*perPage)...)
	list, err := pgx.CollectRows(rows, fxRate)
	if err != nil {
		return nil, 0, fmt.Errorf("list exchange rates: %w", err)
	}
	return list, total, nil
}

func nullDay(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// FXRatesBetween implements projections.FXRates.
func (g *Gateway) FXRatesBetween(ctx context.Context, to string, bases []string, from, until time.Time) ([]domain.FXRate, error) {
	rows, _ := g.pool.Query(ctx, `
SELECT base, quote, day, rate::text, updated_at FROM fx_rates
 WHERE day BETWEEN $3 AND $4
   AND ((quote = $1 AND base = ANY($2)) OR (base = $1 AND quote = ANY($2)))
 ORDER BY day, base COLLATE "C", quote COLLATE "C"`, to, bases, from, until)
	list, err := pgx.CollectRows(rows, fxRate)
	if err != nil {
		return nil, fmt.Errorf("exchange rates to %s: %w", to, err)
	}
	return list, nil
}
