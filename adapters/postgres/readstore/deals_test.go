package readstore_test

import (
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// The commission report from deals stored in Postgres: a tiered,
// carry-forward deal over a negative month and then a positive one, beside
// a flat default and a flat deal of another provider.
func TestCommissionFromStoredDeals(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	m := readstore.NewReadModels(pool)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `INSERT INTO readmodels.ggr_daily (client_id, day, provider, game, currency, scale, bets, wins) VALUES
		('acme', '2026-09-10', 'prov', 'g', 'EUR', 2, 10000, 50000),
		('acme', '2026-10-05', 'prov', 'g', 'EUR', 2, 60000, 10000),
		('acme', '2026-10-20', 'prov', 'g', 'EUR', 2, 100000, 0),
		('acme', '2026-10-20', 'prov', 'h', 'USD', 2, 1000, 0),
		('acme', '2026-10-07', 'flat', 'g', 'EUR', 2, 1005, 0),
		('other', '2026-10-20', 'prov', 'g', 'EUR', 2, 100000, 0)`); err != nil {
		t.Fatal(err)
	}
	add := func(s domain.DealSpec) domain.DealVersion {
		d, err := domain.NewDeal(s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.AddDealVersion(ctx, domain.DealVersion{Deal: d, Actor: "admin-token:test", Note: "n"})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	add(domain.DealSpec{Provider: "prov", ValidFrom: "2026-01-01", Kind: "flat", Rate: "0.1"})
	tiered := add(domain.DealSpec{Provider: "prov", ClientID: "acme", Currency: "EUR", ValidFrom: "2026-09-01", Kind: "tiered",
		Mode: "marginal", CarryForward: true, Bands: []domain.BandSpec{{From: "0", To: "1000", Rate: "0.1"}, {From: "1000", Rate: "0.2"}}})
	if err := m.SetCommissionRate(ctx, "flat", "", "0.15", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	q := projections.ReportQuery{ClientID: "acme", From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC), GroupBy: []projections.Dimension{projections.DimMonth}}
	rows, err := m.Commission(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// prov EUR: September -400 EUR carried in; October 500 + 1000 = 1500,
	// base 1100: 100 + 20 = 120 EUR. prov USD: the flat default, 1.00.
	// flat EUR: 10.05 × 15 % = 1.5075 → 1.51.
	type row struct {
		provider, currency string
		ggr, commission    int64
		rate               string
		dealID             int64
		kind               string
	}
	want := []row{{"flat", "EUR", 1005, 151, "0.15", 3, "flat"}, {"prov", "EUR", 150000, 12000, "0.2", tiered.ID, "tiered"},
		{"prov", "USD", 1000, 100, "0.1", 1, "flat"}}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if got := (row{r.Provider, r.Currency, r.GGR, r.Commission, r.Rate, r.DealID, r.DealKind}); got != w {
			t.Errorf("row %d = %+v, want %+v", i, got, w)
		}
	}
	// The versions and the history read back as stored.
	hist, total, err := m.DealHistory(ctx, gateway.DealFilter{Provider: "prov"}, 1, 1)
	if err != nil || total != 2 || len(hist) != 1 || hist[0].ID != tiered.ID || hist[0].Actor != "admin-token:test" ||
		hist[0].Deal.Bands[1].From != 100000 || !hist[0].Deal.CarryForward {
		t.Fatalf("history %+v %d %v", hist, total, err)
	}
	all, err := m.DealVersions(ctx, gateway.DealFilter{ClientID: "zed", WithDefaults: true})
	if err != nil || len(all) != 2 {
		t.Fatalf("deals for zed: %+v %v", all, err)
	}
}
