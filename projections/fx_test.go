package projections_test

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// dailyReports answers a GGR report from day rows, grouped as asked (by
// month when asked, else by day), by provider and currency only.
type dailyReports struct{ days []projections.GGRRow }

func (d dailyReports) GGR(_ context.Context, q projections.ReportQuery) ([]projections.GGRRow, error) {
	var out []projections.GGRRow
	for _, r := range d.days {
		if r.Period.Before(q.From) || r.Period.After(q.To) {
			continue
		}
		g := projections.GGRRow{Currency: r.Currency, Scale: r.Scale}
		switch {
		case q.Has(projections.DimDay):
			g.Period = r.Period
		case q.Has(projections.DimMonth):
			g.Period = time.Date(r.Period.Year(), r.Period.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		if q.Has(projections.DimProvider) {
			g.Provider = r.Provider
		}
		i := slices.IndexFunc(out, func(o projections.GGRRow) bool {
			return o.Period.Equal(g.Period) && o.Provider == g.Provider && o.Currency == g.Currency
		})
		if i < 0 {
			out = append(out, g)
			i = len(out) - 1
		}
		out[i].Bets += r.Bets
		out[i].Wins += r.Wins
		out[i].PromoBets += r.PromoBets
		out[i].Rounds += r.Rounds
	}
	return out, nil
}

func (dailyReports) Commission(context.Context, projections.ReportQuery) ([]projections.CommissionRow, error) {
	return nil, nil
}

type fakeRates []domain.FXRate

func (f fakeRates) FXRatesBetween(_ context.Context, to string, bases []string, from, until time.Time) ([]domain.FXRate, error) {
	var out []domain.FXRate
	for _, r := range f {
		if r.Day.Before(from) || r.Day.After(until) {
			continue
		}
		if (r.Quote == to && slices.Contains(bases, r.Base)) || (r.Base == to && slices.Contains(bases, r.Quote)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// TestGGRInAReportingCurrency: each row converted day by day at that day's
// rate (a direct rate, or the inverse of the other way's), USD rows at 1,
// a day without a rate leaves its row incomplete (never a zero) and so the
// group's total, which otherwise adds every currency.
func TestGGRInAReportingCurrency(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	row := func(d int, prov, cur string, scale int, bets, wins int64) projections.GGRRow {
		return projections.GGRRow{Period: day(d), Provider: prov, Currency: cur, Scale: scale, Bets: bets, Wins: wins}
	}
	reports := dailyReports{days: []projections.GGRRow{
		row(1, "p1", "EUR", 2, 10000, 4000),  // 100.00 - 40.00 at 1.10
		row(2, "p1", "EUR", 2, 5000, 0),      // 50.00 at 1.20
		row(1, "p1", "USD", 2, 700, 200),     // as is
		row(1, "p2", "BTC", 8, 100000000, 0), // 1 BTC at 1/0.00001 = 100000
		row(2, "p2", "BTC", 8, 50000000, 0),  // no rate on the 2nd
	}}
	rate := func(base, quote string, d int, r string) domain.FXRate {
		fr, err := domain.NewFXRate(base, quote, day(d).Format(time.DateOnly), r)
		if err != nil {
			t.Fatal(err)
		}
		return fr
	}
	rates := fakeRates{
		rate("EUR", "USD", 1, "1.10"),
		rate("EUR", "USD", 2, "1.20"),
		rate("USD", "EUR", 2, "5"),       // the direct EUR→USD wins over the inverse
		rate("USD", "BTC", 1, "0.00001"), // inverse: 1 BTC = 100000 USD
		rate("EUR", "USD", 30, "9"),      // outside the report
	}
	q := &projections.Queries{Positions: &fakePositions{pos: 7}, Reports: reports}
	usd := domain.MustCurrency("USD")
	r := projections.ReportQuery{ClientID: "acme", From: day(1), To: day(2),
		GroupBy: []projections.Dimension{projections.DimMonth, projections.DimProvider}}
	rows, rep, totals, pos, err := q.GGRIn(context.Background(), r, 0, usd, rates)
	if err != nil || pos != 7 {
		t.Fatal(pos, err)
	}
	if len(rows) != 3 || len(rep) != 3 {
		t.Fatalf("%d rows, %d reporting, want 3", len(rows), len(rep))
	}
	want := map[string]projections.ReportingGGR{
		"p1 EUR": {Currency: "USD", Scale: 2, Complete: true, NetBets: 11000 + 6000, NetWins: 4400, GGR: 17000 - 4400},
		"p1 USD": {Currency: "USD", Scale: 2, Complete: true, NetBets: 700, NetWins: 200, GGR: 500},
		"p2 BTC": {Currency: "USD", Scale: 2, Complete: false, MissingDays: []time.Time{day(2)}},
	}
	for i, row := range rows {
		w := want[row.Provider+" "+row.Currency]
		g := rep[i]
		if g.Currency != w.Currency || g.Complete != w.Complete || g.NetBets != w.NetBets || g.NetWins != w.NetWins ||
			g.GGR != w.GGR || !slices.EqualFunc(g.MissingDays, w.MissingDays, time.Time.Equal) {
			t.Errorf("%s %s: %+v, want %+v", row.Provider, row.Currency, g, w)
		}
	}
	if len(totals) != 2 {
		t.Fatalf("totals %+v, want p1 and p2", totals)
	}
	for _, tot := range totals {
		switch tot.Provider {
		case "p1":
			if !tot.Reporting.Complete || tot.Reporting.GGR != 12600+500 || !slices.Equal(tot.Currencies, []string{"EUR", "USD"}) {
				t.Errorf("p1 total %+v", tot)
			}
		case "p2":
			if tot.Reporting.Complete || tot.Reporting.GGR != 0 || len(tot.Reporting.Missing) != 1 ||
				tot.Reporting.Missing[0].Currency != "BTC" || !tot.Reporting.Missing[0].Days[0].Equal(day(2)) {
				t.Errorf("p2 total %+v", tot)
			}
		default:
			t.Errorf("unexpected total %+v", tot)
		}
	}

	t.Run("the BTC day with a rate, alone, is complete", func(t *testing.T) {
		r1 := r
		r1.To = day(1)
		_, rep, _, _, err := q.GGRIn(context.Background(), r1, 0, usd, rates)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range rep {
			if !g.Complete {
				t.Errorf("incomplete on day 1: %+v", g)
			}
		}
	})
	t.Run("no rates configured", func(t *testing.T) {
		if _, _, _, _, err := q.GGRIn(context.Background(), r, 0, usd, nil); !errors.Is(err, projections.ErrNoRates) {
			t.Fatalf("err %v", err)
		}
	})
}

// commissionDays answers the commission report like the store: from day
// rows at one rate, per provider and currency, a row per day when grouped
// by day and else per month.
type commissionDays struct {
	dailyReports
	days []projections.CommissionRow
}

func (c commissionDays) Commission(_ context.Context, q projections.ReportQuery) ([]projections.CommissionRow, error) {
	var out []projections.CommissionRow
	for _, d := range c.days {
		if d.Period.Before(q.From) || d.Period.After(q.To) {
			continue
		}
		p := time.Date(d.Period.Year(), d.Period.Month(), 1, 0, 0, 0, 0, time.UTC)
		if q.Has(projections.DimDay) {
			p = d.Period
		}
		i := slices.IndexFunc(out, func(o projections.CommissionRow) bool {
			return o.Period.Equal(p) && o.Provider == d.Provider && o.Currency == d.Currency
		})
		if i < 0 {
			out = append(out, projections.CommissionRow{Period: p, Provider: d.Provider, Currency: d.Currency, Scale: d.Scale, Rate: d.Rate,
				Owed: new(big.Rat)})
			i = len(out) - 1
		}
		out[i].GGR += d.GGR
		// Owed is exact: rate × GGR of each day (a flat deal, as the store
		// works it out).
		rate, _ := new(big.Rat).SetString(d.Rate)
		out[i].Owed.Add(out[i].Owed, rate.Mul(rate, big.NewRat(d.GGR, 1)))
	}
	return out, nil
}

// TestCommissionInWithoutAPeriodGroup: a commission report grouped by
// provider (or currency) alone has a row per month, and its days are
// converted into it — not only the first of the month.
func TestCommissionInWithoutAPeriodGroup(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 10, d, 0, 0, 0, 0, time.UTC) }
	reports := commissionDays{days: []projections.CommissionRow{
		{Period: day(10), Provider: "p1", Currency: "EUR", Scale: 2, GGR: 600, Rate: "0.1"},
		{Period: day(12), Provider: "p1", Currency: "EUR", Scale: 2, GGR: 400, Rate: "0.1"},
	}}
	rates := fakeRates{}
	for _, d := range []int{10, 12} {
		fr, err := domain.NewFXRate("EUR", "USD", day(d).Format(time.DateOnly), "1.1")
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, fr)
	}
	q := &projections.Queries{Positions: &fakePositions{pos: 7}, Reports: reports}
	for _, group := range []projections.Dimension{projections.DimProvider, projections.DimMonth} {
		r := projections.ReportQuery{ClientID: "acme", From: day(1), To: day(31), GroupBy: []projections.Dimension{group}}
		rows, conv, _, err := q.CommissionIn(context.Background(), r, 0, domain.MustCurrency("USD"), rates)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || !conv[0].Complete || conv[0].GGR != 1100 || conv[0].Commission != 110 {
			t.Errorf("grouped by %s: %+v %+v, want GGR 11.00 and commission 1.10 USD", group, rows, conv)
		}
	}
}
