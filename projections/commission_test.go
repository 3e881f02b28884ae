package projections_test

import (
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

func dealV(t *testing.T, id int64, s domain.DealSpec) domain.DealVersion {
	t.Helper()
	d, err := domain.NewDeal(s)
	if err != nil {
		t.Fatal(err)
	}
	return domain.DealVersion{ID: id, Deal: d}
}

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

type wantRow struct {
	period, currency string
	ggr, commission  int64
	rate             string
	changed          bool
	dealID           int64
}

func TestCommissionReport(t *testing.T) {
	eur := func(day string, ggr int64) projections.CommissionDay {
		return projections.CommissionDay{Day: date(day), Provider: "prov", Currency: "EUR", Scale: 2, GGR: ggr}
	}
	bands := []domain.BandSpec{{From: "0", To: "1000", Rate: "0.1"}, {From: "1000", Rate: "0.2"}}
	marginalCarry := dealV(t, 7, domain.DealSpec{Provider: "prov", ClientID: "acme", Currency: "EUR", ValidFrom: "2026-09-01",
		Kind: "tiered", Mode: "marginal", Bands: bands, CarryForward: true})
	whole := dealV(t, 8, domain.DealSpec{Provider: "prov", Currency: "EUR", ValidFrom: "2026-09-01", Kind: "tiered", Mode: "whole", Bands: bands})
	flat := dealV(t, 3, domain.DealSpec{Provider: "prov", ValidFrom: "2026-01-01", Kind: "flat", Rate: "0.1"})
	flatLater := dealV(t, 4, domain.DealSpec{Provider: "prov", ValidFrom: "2026-10-16", Kind: "flat", Rate: "0.25"})
	month := func(from, to string) projections.ReportQuery {
		return projections.ReportQuery{ClientID: "acme", From: date(from), To: date(to), GroupBy: []projections.Dimension{projections.DimMonth}}
	}
	byDay := func(from, to string) projections.ReportQuery {
		q := month(from, to)
		q.GroupBy = []projections.Dimension{projections.DimDay}
		return q
	}
	for _, tc := range []struct {
		name  string
		q     projections.ReportQuery
		days  []projections.CommissionDay
		deals []domain.DealVersion
		want  []wantRow
	}{
		{
			name: "flat per day, a rate change mid-month, half a cent rounds away from zero",
			q:    month("2026-10-01", "2026-10-31"),
			days: []projections.CommissionDay{eur("2026-10-01", 5), eur("2026-10-20", 1000)},
			// 5 × 0.1 = 0.5 + 1000 × 0.25 = 250 → 250.5 → 251
			deals: []domain.DealVersion{flat, flatLater},
			want:  []wantRow{{"2026-10-01", "EUR", 1005, 251, "0.25", true, 4}},
		},
		{
			name:  "flat negative month owes nothing",
			q:     month("2026-10-01", "2026-10-31"),
			days:  []projections.CommissionDay{eur("2026-10-01", 500), eur("2026-10-02", -800)},
			deals: []domain.DealVersion{flat},
			want:  []wantRow{{"2026-10-01", "EUR", -300, 0, "0.1", false, 3}},
		},
		{
			name: "whole tiered month: the band reached applies to all of it",
			q:    month("2026-10-01", "2026-10-31"),
			// 600 + 500 = 1100 EUR: 20 % of all = 220 EUR
			days:  []projections.CommissionDay{eur("2026-10-03", 60000), eur("2026-10-09", 50000)},
			deals: []domain.DealVersion{flat, whole},
			want:  []wantRow{{"2026-10-01", "EUR", 110000, 22000, "0.2", false, 8}},
		},
		{
			name:  "whole tiered by day: the month's commission on its last day with GGR",
			q:     byDay("2026-10-01", "2026-10-31"),
			days:  []projections.CommissionDay{eur("2026-10-03", 60000), eur("2026-10-09", 50000)},
			deals: []domain.DealVersion{whole},
			want: []wantRow{{"2026-10-03", "EUR", 60000, 0, "0.2", false, 8},
				{"2026-10-09", "EUR", 50000, 22000, "0.2", false, 8}},
		},
		{
			name: "a report starting mid-month still bands the whole month",
			q:    month("2026-10-05", "2026-10-31"),
			days: []projections.CommissionDay{eur("2026-10-03", 60000), eur("2026-10-09", 50000)},
			// The row's GGR is of the range; the month's commission of all of it.
			deals: []domain.DealVersion{whole},
			want:  []wantRow{{"2026-10-01", "EUR", 50000, 22000, "0.2", false, 8}},
		},
		{
			name: "carry-forward: a negative month, then a positive one, marginal bands",
			q:    month("2026-09-01", "2026-11-30"),
			days: []projections.CommissionDay{eur("2026-09-10", -40000), eur("2026-10-10", 30000), eur("2026-10-20", 20000),
				eur("2026-11-02", 150000)},
			// Sep: -400 carried. Oct: 500 - 400 = 100 → 10 EUR. Nov: 1500 → 100 + 100 = 200 EUR.
			deals: []domain.DealVersion{whole, marginalCarry},
			want: []wantRow{{"2026-09-01", "EUR", -40000, 0, "0.1", false, 7},
				{"2026-10-01", "EUR", 50000, 1000, "0.1", false, 7},
				{"2026-11-01", "EUR", 150000, 20000, "0.2", false, 7}},
		},
		{
			name:  "a carried loss from before the report's range counts",
			q:     month("2026-10-01", "2026-10-31"),
			days:  []projections.CommissionDay{eur("2026-09-10", -40000), eur("2026-10-10", 50000)},
			deals: []domain.DealVersion{marginalCarry},
			want:  []wantRow{{"2026-10-01", "EUR", 50000, 1000, "0.1", false, 7}},
		},
		{
			name:  "a deal in another currency does not apply; the default does",
			q:     month("2026-10-01", "2026-10-31"),
			days:  []projections.CommissionDay{{Day: date("2026-10-01"), Provider: "prov", Currency: "USD", Scale: 2, GGR: 1000}},
			deals: []domain.DealVersion{whole, flat},
			want:  []wantRow{{"2026-10-01", "USD", 1000, 100, "0.1", false, 3}},
		},
		{
			name:  "no deal: no commission, no rate",
			q:     month("2026-10-01", "2026-10-31"),
			days:  []projections.CommissionDay{eur("2026-10-01", 1000)},
			deals: nil,
			want:  []wantRow{{"2026-10-01", "EUR", 1000, 0, "", false, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := projections.CommissionStart(tc.q, tc.deals)
			var days []projections.CommissionDay
			for _, d := range tc.days {
				if !d.Day.Before(start) {
					days = append(days, d)
				}
			}
			rows, err := projections.CommissionReport(tc.q, "acme", days, tc.deals)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.want) {
				t.Fatalf("rows = %+v, want %+v", rows, tc.want)
			}
			for i, w := range tc.want {
				r := rows[i]
				got := wantRow{r.Period.Format(time.DateOnly), r.Currency, r.GGR, r.Commission, r.Rate, r.RateChanged, r.DealID}
				if got != w {
					t.Errorf("row %d = %+v, want %+v", i, got, w)
				}
			}
		})
	}
}
