package readstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// Commission deals as data (migration 00022): configuration, not derived
// from events, so it lives in the default schema and survives a rebuild.

var _ gateway.CommissionDeals = (*ReadModels)(nil)

// dealColumns are read by scanDeal, in its order.
const dealColumns = `id, provider, client_id, currency, valid_from, kind, coalesce(rate::text, ''), mode, bands::text,
	carry_forward, created_at, actor, backdated, note`

// bandJSON is a band as stored in commission_deals.bands.
type bandJSON struct {
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Rate string `json:"rate"`
}

// AddDealVersion stores a deal version (append-only).
func (m *ReadModels) AddDealVersion(ctx context.Context, v domain.DealVersion) (domain.DealVersion, error) {
	s := v.Deal.Spec()
	bands := make([]bandJSON, len(s.Bands))
	for i, b := range s.Bands {
		bands[i] = bandJSON(b)
	}
	bj, err := json.Marshal(bands)
	if err != nil {
		return v, fmt.Errorf("deal bands: %w", err)
	}
	// Deals never rewrite a closed period: a version may not start on or
	// before the last day of a statement (migration 00020) it would apply
	// to — the client's own, or any client's for a default deal. Checked
	// in the insert itself.
	row := m.pool.QueryRow(ctx, `INSERT INTO commission_deals
		(provider, client_id, currency, valid_from, kind, rate, mode, bands, carry_forward, actor, backdated, note)
		SELECT $1, $2, $3, $4, $5, $6::numeric, $7, $8::jsonb, $9, $10, $11, $12
		WHERE NOT EXISTS (SELECT 1 FROM statements WHERE provider = $1 AND ($2 = '' OR client_id = $2) AND period_to >= $4)
		RETURNING `+dealColumns,
		s.Provider, s.ClientID, s.Currency, v.Deal.ValidFrom, s.Kind, nullText(s.Rate), s.Mode, string(bj), s.CarryForward,
		v.Actor, v.Backdated, v.Note)
	out, err := scanDeal(row)
	if errors.Is(err, pgx.ErrNoRows) {
		var closed time.Time
		if err := m.pool.QueryRow(ctx, `SELECT max(period_to) FROM statements WHERE provider = $1 AND ($2 = '' OR client_id = $2)`,
			s.Provider, s.ClientID).Scan(&closed); err != nil {
			return v, fmt.Errorf("add deal version of %s: closed periods: %w", s.Provider, err)
		}
		return v, &domain.FieldError{Field: "valid_from", Message: fmt.Sprintf(
			"valid_from %s is in a closed period: a statement of %s is closed through %s, and deals never rewrite a closed period",
			s.ValidFrom, s.Provider, closed.Format(time.DateOnly))}
	}
	if err != nil {
		return v, fmt.Errorf("add deal version of %s: %w", s.Provider, err)
	}
	return out, nil
}

func scanDeal(row pgx.Row) (domain.DealVersion, error) {
	var (
		v         domain.DealVersion
		s         domain.DealSpec
		validFrom time.Time
		bands     string
	)
	if err := row.Scan(&v.ID, &s.Provider, &s.ClientID, &s.Currency, &validFrom, &s.Kind, &s.Rate, &s.Mode, &bands,
		&s.CarryForward, &v.CreatedAt, &v.Actor, &v.Backdated, &v.Note); err != nil {
		return v, err
	}
	var bj []bandJSON
	if err := json.Unmarshal([]byte(bands), &bj); err != nil {
		return v, fmt.Errorf("deal %d bands: %w", v.ID, err)
	}
	for _, b := range bj {
		s.Bands = append(s.Bands, domain.BandSpec(b))
	}
	s.ValidFrom, s.Rate = validFrom.Format(time.DateOnly), trimRate(s.Rate)
	d, err := domain.NewDeal(s)
	if err != nil {
		return v, fmt.Errorf("stored deal %d: %w", v.ID, err)
	}
	v.Deal, v.CreatedAt = d, v.CreatedAt.UTC()
	return v, nil
}

// dealWhere is the WHERE clause of f, from the argument $n on.
func dealWhere(f gateway.DealFilter, n int) (string, []any) {
	var (
		conds []string
		args  []any
	)
	if f.Provider != "" {
		args = append(args, f.Provider)
		conds = append(conds, fmt.Sprintf("provider = $%d", n+len(args)-1))
	}
	if f.ClientID != "" {
		args = append(args, f.ClientID)
		cond := fmt.Sprintf("client_id = $%d", n+len(args)-1)
		if f.WithDefaults {
			cond = fmt.Sprintf("client_id IN ('', $%d)", n+len(args)-1)
		}
		conds = append(conds, cond)
	}
	if len(conds) == 0 {
		return "true", nil
	}
	return strings.Join(conds, " AND "), args
}

// DealVersions are every version of the deals f selects, oldest first.
func (m *ReadModels) DealVersions(ctx context.Context, f gateway.DealFilter) ([]domain.DealVersion, error) {
	where, args := dealWhere(f, 1)
	rows, err := m.pool.Query(ctx, `SELECT `+dealColumns+` FROM commission_deals WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read deals: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.DealVersion, error) { return scanDeal(r) })
	if err != nil {
		return nil, fmt.Errorf("read deals: %w", err)
	}
	return out, nil
}

// DealHistory is a page of the versions f selects, newest first.
func (m *ReadModels) DealHistory(ctx context.Context, f gateway.DealFilter, page, perPage int) ([]domain.DealVersion, int64, error) {
	where, args := dealWhere(f, 3)
	rows, err := m.pool.Query(ctx, `SELECT `+dealColumns+`, count(*) OVER () FROM commission_deals WHERE `+where+`
		ORDER BY id DESC LIMIT $1 OFFSET $2`, append([]any{perPage, (page - 1) * perPage}, args...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("read deal history: %w", err)
	}
	var total int64
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.DealVersion, error) {
		v, err := scanDeal(totalRow{r, &total})
		return v, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read deal history: %w", err)
	}
	if len(out) == 0 && page > 1 {
		where, args := dealWhere(f, 1) // numbered from $1 here
		err := m.pool.QueryRow(ctx, `SELECT count(*) FROM commission_deals WHERE `+where, args...).Scan(&total)
		if err != nil {
			return nil, 0, fmt.Errorf("count deal history: %w", err)
		}
	}
	return out, total, nil
}

// totalRow scans a row whose last column is a window count into total.
type totalRow struct {
	pgx.Row
	total *int64
}

func (r totalRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.total)...) }

// SetCommissionRate adds a flat deal version for every currency: rate
// (decimal text, 0..1) on the positive GGR of provider from validFrom (a
// UTC day) on, for client or, when client is empty, for every client
// without a deal of its own. Its history names the actor "go". The admin
// API (POST /admin/v1/deals) is the way for people.
func (m *ReadModels) SetCommissionRate(ctx context.Context, provider, client, rate string, validFrom time.Time) error {
	d, err := domain.NewDeal(domain.DealSpec{Provider: provider, ClientID: client, ValidFrom: validFrom.UTC().Format(time.DateOnly),
		Kind: string(domain.DealFlat), Rate: rate})
	if err != nil {
		return err
	}
	_, err = m.AddDealVersion(ctx, domain.DealVersion{Deal: d, Actor: "go", Backdated: true})
	return err
}

// Commission applies the commission deals to a client's real-money GGR,
// as projections.CommissionReport works them out.
func (m *ReadModels) Commission(ctx context.Context, q projections.ReportQuery) ([]projections.CommissionRow, error) {
	if q.ClientID == "" {
		return nil, errors.New("commission report: no client")
	}
	deals, err := m.DealVersions(ctx, gateway.DealFilter{ClientID: q.ClientID, WithDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("commission report: %w", err)
	}
	rows, err := m.pool.Query(ctx, `
		SELECT day, provider, currency, max(scale), sum((bets - bet_refunds) - (wins - win_reversals))::bigint
		FROM `+m.t("ggr_daily")+` WHERE client_id = $1 AND day BETWEEN $2 AND $3
		GROUP BY day, provider, currency`, q.ClientID, projections.CommissionStart(q, deals), q.To)
	if err != nil {
		return nil, fmt.Errorf("commission report: %w", err)
	}
	days, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (projections.CommissionDay, error) {
		var (
			d     projections.CommissionDay
			scale int16
		)
		err := row.Scan(&d.Day, &d.Provider, &d.Currency, &scale, &d.GGR)
		d.Scale = int(scale)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("commission report: %w", err)
	}
	return projections.CommissionReport(q, q.ClientID, days, deals)
}

// trimRate drops the trailing zeros of numeric text: "0.150000" -> "0.15".
func trimRate(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
