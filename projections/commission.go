package projections

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// The commission report from deals as data (docs/read-models.md,
// "Commission"). Each day of a provider's GGR in a currency has a deal:
// the client's own deal for the currency, else the client's own for every
// currency, else the provider's default for the currency, else the
// provider's default; of each, the version with the latest valid_from at
// or before the day (of versions with the same valid_from, the last
// created). No deal means no commission.
//
// A flat deal without carry-forward is worked out per day, as rate × GGR.
// A tiered or carry-forward deal is worked out per calendar month, on the
// GGR of the month's days under that deal version (a segment of the
// month): commission on the base (GGR plus any carried loss, never below
// 0) as the deal says, due on the segment's last day with GGR up to the
// report's last day — a month not yet over is counted month to date. A
// carried loss runs from month to month while the deal has carry-forward;
// a day under a deal without it (or under no deal) ends it.
//
// A row's commission is max(0, the sum of its days' commission), rounded
// once, half away from zero, to the currency's minor units.

// CommissionDay is one day's real-money GGR of a provider in a currency
// (minor units of the currency, at Scale decimals).
type CommissionDay struct {
	Day      time.Time
	Provider string
	Currency string
	Scale    int
	GGR      int64
}

// CommissionStart is the first day whose GGR a commission report r needs
// under deals: the first of r.From's month (a month's bands are of the
// whole month), or earlier — the first of the month of the first
// carry-forward version — when a carried loss may reach into r.
func CommissionStart(r ReportQuery, deals []domain.DealVersion) time.Time {
	start := monthOf(r.From)
	for _, v := range deals {
		if v.Deal.CarryForward && v.Deal.ValidFrom.Before(start) {
			start = monthOf(v.Deal.ValidFrom)
		}
	}
	return start
}

func monthOf(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }

// dayCommission is a day's share of the report: its GGR, the commission
// due on it (exact, minor units) and the deal it was under.
type dayCommission struct {
	CommissionDay
	owed *big.Rat
	rate string
	deal *domain.DealVersion
}

// CommissionReport works out the commission rows of r (grouped by day, or
// else by month; always by provider and currency) from days — every day
// with GGR of client from CommissionStart(r, deals) to r.To — and deals,
// the deal versions of client and the providers' defaults.
func CommissionReport(r ReportQuery, client string, days []CommissionDay, deals []domain.DealVersion) ([]CommissionRow, error) {
	type series struct{ provider, currency string }
	bySeries := map[series][]CommissionDay{}
	for _, d := range days {
		k := series{d.Provider, d.Currency}
		bySeries[k] = append(bySeries[k], d)
	}
	var all []dayCommission
	for k, ds := range bySeries {
		slices.SortFunc(ds, func(a, b CommissionDay) int { return a.Day.Compare(b.Day) })
		got, err := seriesCommission(client, k.provider, k.currency, ds, deals)
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
	}
	return commissionRows(r, all)
}

// seriesCommission is the commission of each day of one provider's GGR in
// one currency (days in order).
func seriesCommission(client, provider, currency string, days []CommissionDay, deals []domain.DealVersion) ([]dayCommission, error) {
	out := make([]dayCommission, len(days))
	for i, d := range days {
		out[i] = dayCommission{CommissionDay: d, owed: new(big.Rat), deal: dealOn(deals, client, provider, currency, d.Day)}
	}
	var carried int64
	for start := 0; start < len(out); {
		// A segment: the days of one month under one deal version.
		end := start + 1
		for end < len(out) && monthOf(out[end].Day).Equal(monthOf(out[start].Day)) && out[end].deal == out[start].deal {
			end++
		}
		seg, v := out[start:end], out[start].deal
		switch {
		case v == nil:
			carried = 0
		case !v.Deal.Monthly():
			carried = 0
			rate := v.Deal.FlatRate()
			for i := range seg {
				seg[i].owed.Mul(new(big.Rat).SetInt64(seg[i].GGR), rate)
				seg[i].rate = v.Deal.Rate
			}
		default:
			var ggr int64
			for _, d := range seg {
				ggr += d.GGR
			}
			base := ggr
			if v.Deal.CarryForward {
				base, carried = domain.CarryForward(ggr, carried)
			} else {
				carried = 0
			}
			owed, rate := v.Deal.CommissionOn(base)
			seg[len(seg)-1].owed = owed
			for i := range seg {
				seg[i].rate = rate
			}
		}
		start = end
	}
	return out, nil
}

// dealOn is the deal version in effect for client's GGR of provider in
// currency on day, nil when none is.
func dealOn(deals []domain.DealVersion, client, provider, currency string, day time.Time) *domain.DealVersion {
	levels := [4]*domain.DealVersion{} // client+currency, client, default+currency, default
	for i := range deals {
		v := &deals[i]
		d := v.Deal
		if d.Provider != provider || d.ValidFrom.After(day) || (d.ClientID != "" && d.ClientID != client) ||
			(d.Currency != "" && d.Currency != currency) {
			continue
		}
		level := 0
		if d.Currency == "" {
			level++
		}
		if d.ClientID == "" {
			level += 2
		}
		if cur := levels[level]; cur == nil || d.ValidFrom.After(cur.Deal.ValidFrom) ||
			(d.ValidFrom.Equal(cur.Deal.ValidFrom) && v.ID > cur.ID) {
			levels[level] = v
		}
	}
	for _, v := range levels {
		if v != nil {
			return v
		}
	}
	return nil
}

// commissionRows adds the days of r's range into r's rows.
func commissionRows(r ReportQuery, days []dayCommission) ([]CommissionRow, error) {
	type rowKey struct {
		period             time.Time
		provider, currency string
	}
	index := map[rowKey]int{}
	var rows []CommissionRow
	var rates []map[string]bool
	var last []time.Time
	for _, d := range days {
		if d.Day.Before(r.From) || d.Day.After(r.To) {
			continue
		}
		period := monthOf(d.Day)
		if r.Has(DimDay) {
			period = d.Day
		}
		k := rowKey{period, d.Provider, d.Currency}
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, CommissionRow{Period: period, Provider: d.Provider, Currency: d.Currency, Owed: new(big.Rat)})
			rates = append(rates, map[string]bool{})
			last = append(last, time.Time{})
		}
		row := &rows[i]
		row.Scale = max(row.Scale, d.Scale)
		row.GGR += d.GGR
		row.Owed.Add(row.Owed, d.owed)
		rates[i][d.rate] = true
		if !d.Day.Before(last[i]) {
			last[i] = d.Day
			row.Rate, row.DealID, row.DealKind = d.rate, 0, ""
			if d.deal != nil {
				row.DealID, row.DealKind = d.deal.ID, string(d.deal.Deal.Kind)
			}
		}
	}
	for i := range rows {
		row := &rows[i]
		row.RateChanged = len(rates[i]) > 1
		if row.Owed.Sign() > 0 {
			n, ok := domain.RoundRat(row.Owed)
			if !ok {
				return nil, fmt.Errorf("%w: commission of %s in %s", domain.ErrConversionOverflow, row.Provider, row.Currency)
			}
			row.Commission = n
		}
	}
	slices.SortFunc(rows, func(a, b CommissionRow) int {
		return cmp.Or(a.Period.Compare(b.Period), strings.Compare(a.Provider, b.Provider), strings.Compare(a.Currency, b.Currency))
	})
	return rows, nil
}
