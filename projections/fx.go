package projections

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// A GGR report in a reporting currency (docs/reporting-currency.md): every
// row keeps its own currency's amounts, and gets beside them its net bets,
// net wins, GGR, promo GGR and jackpot GGR in the reporting currency, converted at the
// rate of each day; totals add the rows of a group across currencies. A
// day without a rate is a gap, never a zero: the row's reporting amounts
// are then left out (Complete false) and the days named.

// FXRates reads exchange rates (an adapter over the rates table).
type FXRates interface {
	// FXRatesBetween returns the rates between to and each of bases, in
	// either direction (base → to, or to → base), on the days from..until.
	FXRatesBetween(ctx context.Context, to string, bases []string, from, until time.Time) ([]domain.FXRate, error)
}

// ReportingGGR is a GGR row's (or a total's) amounts in the reporting
// currency, in its minor units.
type ReportingGGR struct {
	Currency string
	Scale    int
	// Complete is false when a day of the row had no rate: the amounts are
	// then zero and mean nothing, and MissingDays names the days (with the
	// row's currency in Missing for a total).
	Complete    bool
	MissingDays []time.Time
	Missing     []MissingRate // totals: which currency lacked a rate on which days
	// GGR is NetBets - NetWins; each of those is the sum over the days of
	// the day's amount converted and rounded half away from zero.
	NetBets, NetWins, GGR, PromoGGR int64
	// JackpotGGR is converted as PromoGGR is: day by day, rounded.
	JackpotGGR int64
}

// MissingRate names a currency whose rate to the reporting currency is
// missing on Days.
type MissingRate struct {
	Currency string
	Days     []time.Time
}

// GGRTotal is a group of a GGR report (its period, provider and game as
// grouped) over every currency, in the reporting currency.
type GGRTotal struct {
	Period         time.Time
	Provider, Game string
	Currencies     []string // the currencies added up
	Reporting      ReportingGGR
}

// ErrNoRates is returned when a reporting currency is asked of a Queries
// without FX.
var ErrNoRates = errors.New("exchange rates not configured")

// GGRIn is the GGR report r (as GGR answers it) with each row's amounts in
// to beside its own, and the totals per group across currencies.
func (q *Queries) GGRIn(ctx context.Context, r ReportQuery, minPosition int64, to domain.Currency, fx FXRates) (
	[]GGRRow, []ReportingGGR, []GGRTotal, int64, error) {
	if fx == nil {
		return nil, nil, nil, 0, ErrNoRates
	}
	rows, pos, err := q.GGR(ctx, r, minPosition)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	// The same report by day (the rate is a day's), read after the rows:
	// it reflects at least their position.
	days, err := q.Reports.GGR(ctx, byDay(r))
	if err != nil {
		return nil, nil, nil, 0, err
	}
	currencies := make([]string, len(days))
	for i, d := range days {
		currencies[i] = d.Currency
	}
	rates, err := dailyRates(ctx, fx, to, currencies, r)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	reporting, err := convertGGR(r, rows, days, rates, to)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	return rows, reporting, totalGGR(r, rows, reporting, to), pos, nil
}

// byDay is r grouped by day instead of month (the rate is a day's).
func byDay(r ReportQuery) ReportQuery {
	daily := r
	daily.GroupBy = slices.DeleteFunc(slices.Clone(r.GroupBy), func(d Dimension) bool { return d == DimMonth })
	if !daily.Has(DimDay) {
		daily.GroupBy = append(daily.GroupBy, DimDay)
	}
	return daily
}

// dailyRates reads the rates to to of the currencies (other than to) over
// r's days, indexed by rateTable.
func dailyRates(ctx context.Context, fx FXRates, to domain.Currency, currencies []string, r ReportQuery) (map[rateKey]*big.Rat, error) {
	var bases []string
	for _, c := range currencies {
		if c != to.Code() && !slices.Contains(bases, c) {
			bases = append(bases, c)
		}
	}
	if len(bases) == 0 {
		return map[rateKey]*big.Rat{}, nil
	}
	list, err := fx.FXRatesBetween(ctx, to.Code(), bases, r.From, r.To)
	if err != nil {
		return nil, fmt.Errorf("read exchange rates: %w", err)
	}
	return rateTable(list, to.Code())
}

// dayRate is the rate of currency to to on day: 1 for to itself.
func dayRate(rates map[rateKey]*big.Rat, currency string, day time.Time, to domain.Currency) (*big.Rat, bool) {
	if currency == to.Code() {
		return big.NewRat(1, 1), true
	}
	r, ok := rates[rateKey{currency, day}]
	return r, ok
}

type rateKey struct {
	currency string
	day      time.Time
}

// rateTable indexes rates by (currency, day) as rates to to: a direct rate
// (currency → to) is used as it is, else the inverse of a rate to →
// currency, kept exact (rounding happens once, per converted amount).
func rateTable(list []domain.FXRate, to string) (map[rateKey]*big.Rat, error) {
	out := map[rateKey]*big.Rat{}
	direct := map[rateKey]bool{}
	for _, fr := range list {
		r, err := domain.ParseRate(fr.Rate)
		if err != nil {
			return nil, fmt.Errorf("stored rate %s/%s on %s: %w", fr.Base, fr.Quote, fr.Day.Format(time.DateOnly), err)
		}
		switch {
		case fr.Quote == to:
			k := rateKey{fr.Base, fr.Day}
			out[k], direct[k] = r, true
		case fr.Base == to:
			k := rateKey{fr.Quote, fr.Day}
			if !direct[k] {
				out[k] = r.Inv(r)
			}
		}
	}
	return out, nil
}

// groupKey is a row's group in r's grouping, with or without its currency.
func groupKey(r ReportQuery, row GGRRow, withCurrency bool) string {
	var b strings.Builder
	switch {
	case r.Has(DimDay):
		b.WriteString(row.Period.Format(time.DateOnly))
	case r.Has(DimMonth):
		b.WriteString(row.Period.Format("2006-01"))
	}
	b.WriteByte(0)
	if r.Has(DimProvider) || r.Has(DimGame) {
		b.WriteString(row.Provider)
	}
	b.WriteByte(0)
	if r.Has(DimGame) {
		b.WriteString(row.Game)
	}
	if withCurrency {
		b.WriteByte(0)
		b.WriteString(row.Currency)
	}
	return b.String()
}

// convertGGR converts each day of days and adds it to its row of rows.
func convertGGR(r ReportQuery, rows, days []GGRRow, rates map[rateKey]*big.Rat, to domain.Currency) ([]ReportingGGR, error) {
	index := make(map[string]int, len(rows))
	out := make([]ReportingGGR, len(rows))
	for i, row := range rows {
		index[groupKey(r, row, true)] = i
		out[i] = ReportingGGR{Currency: to.Code(), Scale: to.Exponent(), Complete: true}
	}
	for _, d := range days {
		i, ok := index[groupKey(r, d, true)]
		if !ok {
			continue // a day of a group the rows no longer have: the rows were read first
		}
		rg := &out[i]
		from, err := domain.ParseCurrency(d.Currency)
		if err != nil {
			return nil, fmt.Errorf("report currency %s: %w", d.Currency, err)
		}
		rate, found := dayRate(rates, d.Currency, d.Period, to)
		if !found {
			rg.Complete = false
			rg.MissingDays = append(rg.MissingDays, d.Period)
			continue
		}
		for _, a := range []struct {
			dst *int64
			v   int64
		}{{&rg.NetBets, d.NetBets()}, {&rg.NetWins, d.NetWins()}, {&rg.PromoGGR, d.PromoGGR()}, {&rg.JackpotGGR, d.JackpotGGR()}} {
			v, err := domain.ConvertMinor(a.v, from, rate, to)
			if err != nil {
				return nil, err
			}
			*a.dst += v
		}
	}
	for i := range out {
		rg := &out[i]
		if !rg.Complete {
			rg.NetBets, rg.NetWins, rg.GGR, rg.PromoGGR, rg.JackpotGGR = 0, 0, 0, 0, 0
			slices.SortFunc(rg.MissingDays, func(a, b time.Time) int { return a.Compare(b) })
			continue
		}
		rg.GGR = rg.NetBets - rg.NetWins
	}
	return out, nil
}

// totalGGR adds the rows of each group (without currency) in to.
func totalGGR(r ReportQuery, rows []GGRRow, reporting []ReportingGGR, to domain.Currency) []GGRTotal {
	var out []GGRTotal
	index := map[string]int{}
	for i, row := range rows {
		k := groupKey(r, row, false)
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			t := GGRTotal{Period: row.Period, Reporting: ReportingGGR{Currency: to.Code(), Scale: to.Exponent(), Complete: true}}
			if r.Has(DimProvider) || r.Has(DimGame) {
				t.Provider = row.Provider
			}
			if r.Has(DimGame) {
				t.Game = row.Game
			}
			out = append(out, t)
		}
		t := &out[j]
		t.Currencies = append(t.Currencies, row.Currency)
		rg := reporting[i]
		if !rg.Complete {
			t.Reporting.Complete = false
			t.Reporting.Missing = append(t.Reporting.Missing, MissingRate{Currency: row.Currency, Days: rg.MissingDays})
			continue
		}
		t.Reporting.NetBets += rg.NetBets
		t.Reporting.NetWins += rg.NetWins
		t.Reporting.PromoGGR += rg.PromoGGR
		t.Reporting.JackpotGGR += rg.JackpotGGR
	}
	for i := range out {
		t := &out[i].Reporting
		if !t.Complete {
			t.NetBets, t.NetWins, t.PromoGGR, t.JackpotGGR = 0, 0, 0, 0
			continue
		}
		t.GGR = t.NetBets - t.NetWins
	}
	return out
}

// ReportingCommission is a commission row in the reporting currency: its
// GGR converted day by day (as ReportingGGR's), and its commission as
// max(0, the sum over the days of the day's commission × exchange rate),
// rounded once, half away from zero — the row's own rule with each day's
// commission at that day's exchange rate (a tiered or carry-forward
// month's at the rate of its last day with GGR). Incomplete (zero amounts, the days
// named) when a day had no exchange rate.
type ReportingCommission struct {
	Currency        string
	Scale           int
	Complete        bool
	MissingDays     []time.Time
	GGR, Commission int64
}

// CommissionIn is the commission report r with each row in to beside it.
func (q *Queries) CommissionIn(ctx context.Context, r ReportQuery, minPosition int64, to domain.Currency, fx FXRates) (
	[]CommissionRow, []ReportingCommission, int64, error) {
	if fx == nil {
		return nil, nil, 0, ErrNoRates
	}
	rows, pos, err := q.Commission(ctx, r, minPosition)
	if err != nil {
		return nil, nil, 0, err
	}
	days, err := q.Reports.Commission(ctx, byDay(r))
	if err != nil {
		return nil, nil, 0, err
	}
	currencies := make([]string, len(days))
	for i, d := range days {
		currencies[i] = d.Currency
	}
	rates, err := dailyRates(ctx, fx, to, currencies, r)
	if err != nil {
		return nil, nil, 0, err
	}
	key := func(c CommissionRow, monthly bool) string {
		p := c.Period
		if monthly {
			p = time.Date(p.Year(), p.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		return p.Format(time.DateOnly) + "\x00" + c.Provider + "\x00" + c.Currency
	}
	// The report's rows are per month unless it groups by day (grouped
	// by provider or currency alone too), so each day goes to its month's.
	monthly := !r.Has(DimDay)
	index := make(map[string]int, len(rows))
	out := make([]ReportingCommission, len(rows))
	owed := make([]*big.Rat, len(rows))
	for i, row := range rows {
		index[key(row, false)] = i
		out[i] = ReportingCommission{Currency: to.Code(), Scale: to.Exponent(), Complete: true}
		owed[i] = new(big.Rat)
	}
	for _, d := range days {
		i, ok := index[key(d, monthly)]
		if !ok {
			continue
		}
		rc := &out[i]
		from, err := domain.ParseCurrency(d.Currency)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("report currency %s: %w", d.Currency, err)
		}
		rate, found := dayRate(rates, d.Currency, d.Period, to)
		if !found {
			rc.Complete = false
			rc.MissingDays = append(rc.MissingDays, d.Period)
			continue
		}
		g, err := domain.ConvertMinor(d.GGR, from, rate, to)
		if err != nil {
			return nil, nil, 0, err
		}
		rc.GGR += g
		if d.Owed == nil || d.Owed.Sign() == 0 {
			continue // no deal that day, or nothing due on it
		}
		// The day's commission (minor units of from) × rate, in minor
		// units of to.
		v := new(big.Rat).Set(d.Owed)
		v.Mul(v, rate).Mul(v, new(big.Rat).SetFrac(pow10(to.Exponent()), pow10(from.Exponent())))
		owed[i].Add(owed[i], v)
	}
	for i := range out {
		rc := &out[i]
		if !rc.Complete {
			rc.GGR = 0
			slices.SortFunc(rc.MissingDays, func(a, b time.Time) int { return a.Compare(b) })
			continue
		}
		if owed[i].Sign() > 0 {
			n, ok := domain.RoundRat(owed[i])
			if !ok {
				return nil, nil, 0, fmt.Errorf("%w: commission in %s", domain.ErrConversionOverflow, to.Code())
			}
			rc.Commission = n
		}
	}
	return rows, out, pos, nil
}

func pow10(exp int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil) }

// DayRates are the exchange rates to one currency, day by day, as a report
// in a reporting currency converts with them (LoadDayRates): a direct rate
// or the exact inverse of the opposite one, each amount rounded once.
type DayRates struct {
	to    domain.Currency
	rates map[rateKey]*big.Rat
}

// LoadDayRates reads the rates to to of currencies on the days
// from..until (UTC days; until inclusive).
func LoadDayRates(ctx context.Context, fx FXRates, to domain.Currency, currencies []string, from, until time.Time) (DayRates, error) {
	if fx == nil {
		return DayRates{}, ErrNoRates
	}
	rates, err := dailyRates(ctx, fx, to, currencies, ReportQuery{From: from, To: until})
	if err != nil {
		return DayRates{}, err
	}
	return DayRates{to: to, rates: rates}, nil
}

// Convert is minor units of currency on day in the reporting currency's
// minor units, rounded half away from zero; ok is false when the day has
// no rate (a gap, never a zero).
func (d DayRates) Convert(minor int64, currency string, day time.Time) (int64, bool, error) {
	from, err := domain.ParseCurrency(currency)
	if err != nil {
		return 0, false, err
	}
	rate, ok := dayRate(d.rates, currency, day, d.to)
	if !ok {
		return 0, false, nil
	}
	v, err := domain.ConvertMinor(minor, from, rate, d.to)
	return v, err == nil, err
}
