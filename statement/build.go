package statement

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// ParsePeriod reads a period: a month as 2026-10, a day as 2026-10-05. It
// returns its first and last day.
func ParsePeriod(kind, start string) (from, to time.Time, err error) {
	switch kind {
	case PeriodMonth:
		if from, err = time.Parse("2006-01", start); err != nil {
			return from, to, fmt.Errorf("a month is written 2026-10, not %q", start)
		}
		return from, from.AddDate(0, 1, -1), nil
	case PeriodDay:
		if from, err = time.Parse(time.DateOnly, start); err != nil {
			return from, to, fmt.Errorf("a day is written 2026-10-05, not %q", start)
		}
		return from, from, nil
	}
	return from, to, fmt.Errorf("period %q is not month or day", kind)
}

// Lines are the period's figures per currency from the GGR and commission
// reports grouped by provider, for provider's rows.
func Lines(provider string, ggr []projections.GGRRow, com []projections.CommissionRow) []Line {
	byCur := map[string]*Line{}
	line := func(cur string, scale int) *Line {
		l, ok := byCur[cur]
		if !ok {
			zero := domain.FormatMinor(0, scale)
			l = &Line{Currency: cur, Bets: zero, BetRefunds: zero, Wins: zero, WinReversals: zero, GGR: zero, PromoBets: zero,
				PromoBetRefunds: zero, PromoWins: zero, PromoWinReversals: zero, PromoGGR: zero, JackpotWins: zero, JackpotWinReversals: zero, JackpotGGR: zero,
				Commission: zero}
			byCur[cur] = l
		}
		return l
	}
	for _, r := range ggr {
		if r.Provider != provider {
			continue
		}
		l, f := line(r.Currency, r.Scale), func(v int64) string { return domain.FormatMinor(v, r.Scale) }
		l.Bets, l.BetRefunds, l.Wins, l.WinReversals, l.GGR = f(r.Bets), f(r.BetRefunds), f(r.Wins), f(r.WinReversals), f(r.GGR())
		l.PromoBets, l.PromoBetRefunds, l.PromoWins, l.PromoWinReversals, l.PromoGGR = f(r.PromoBets), f(r.PromoBetRefunds),
			f(r.PromoWins), f(r.PromoWinReversals), f(r.PromoGGR())
		l.JackpotWins, l.JackpotWinReversals, l.JackpotGGR = f(r.JackpotWins), f(r.JackpotWinReversals), f(r.JackpotGGR())
		l.Rounds, l.Players = r.Rounds, r.Players
	}
	for _, r := range com {
		if r.Provider != provider {
			continue
		}
		l := line(r.Currency, r.Scale)
		l.Commission, l.Rate, l.RateChanged = domain.FormatMinor(r.Commission, r.Scale), r.Rate, r.RateChanged
		l.DealID, l.DealKind = r.DealID, r.DealKind
	}
	out := make([]Line, 0, len(byCur))
	for _, l := range byCur {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Line) int { return strings.Compare(a.Currency, b.Currency) })
	return out
}

// Prior is an earlier closed statement of the same client and provider
// with its period's lines as the read models compute them now.
type Prior struct {
	Payload Payload
	Now     []Line
}

// LateChanges are, for each prior statement (in the order given), the
// change of its period's GGR and commission per currency since it was
// closed that no statement has carried yet: now less what it stated less
// what later statements carried of it. Only non-zero changes are listed.
func LateChanges(prior []Prior) ([]Late, error) {
	carried := map[string]sums{} // by the statement carried
	for _, p := range prior {
		for _, l := range p.Payload.Late {
			if carried[l.StatementID] == nil {
				carried[l.StatementID] = sums{}
			}
			if err := carried[l.StatementID].add(l.Currency, l.GGR, l.Commission, 1); err != nil {
				return nil, fmt.Errorf("statement %s: %w", p.Payload.ID, err)
			}
		}
	}
	var out []Late
	for _, p := range prior {
		delta := sums{}
		for _, l := range p.Now {
			if err := delta.add(l.Currency, l.GGR, l.Commission, 1); err != nil {
				return nil, fmt.Errorf("statement %s: %w", p.Payload.ID, err)
			}
		}
		for _, l := range p.Payload.Lines {
			if err := delta.add(l.Currency, l.GGR, l.Commission, -1); err != nil {
				return nil, fmt.Errorf("statement %s: %w", p.Payload.ID, err)
			}
		}
		for cur, v := range carried[p.Payload.ID] {
			d := delta[cur]
			delta[cur] = [2]int64{d[0] - v[0], d[1] - v[1]}
		}
		totals, err := delta.totals()
		if err != nil {
			return nil, err
		}
		for _, t := range totals {
			if delta[t.Currency] != [2]int64{} {
				out = append(out, Late{StatementID: p.Payload.ID, From: p.Payload.From, To: p.Payload.To, Currency: t.Currency,
					GGR: t.GGR, Commission: t.Commission})
			}
		}
	}
	return out, nil
}

// Totals are lines plus late per currency, in currency order.
func Totals(lines []Line, late []Late) ([]Total, error) {
	s := sums{}
	for _, l := range lines {
		if err := s.add(l.Currency, l.GGR, l.Commission, 1); err != nil {
			return nil, err
		}
	}
	for _, l := range late {
		if err := s.add(l.Currency, l.GGR, l.Commission, 1); err != nil {
			return nil, err
		}
	}
	return s.totals()
}

// sums are GGR and commission per currency, in minor units.
type sums map[string][2]int64

// add adds sign times the decimal amounts ggr and com of currency cur.
func (s sums) add(cur, ggr, com string, sign int64) error {
	g, err1 := minor(ggr, cur)
	c, err2 := minor(com, cur)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	v := s[cur]
	s[cur] = [2]int64{v[0] + sign*g, v[1] + sign*c}
	return nil
}

// totals are s as decimal text, in currency order.
func (s sums) totals() ([]Total, error) {
	out := make([]Total, 0, len(s))
	for cur, v := range s {
		exp, err := exponent(cur)
		if err != nil {
			return nil, err
		}
		out = append(out, Total{Currency: cur, GGR: domain.FormatMinor(v[0], exp), Commission: domain.FormatMinor(v[1], exp)})
	}
	slices.SortFunc(out, func(a, b Total) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}

func exponent(code string) (int, error) {
	cur, err := domain.ParseCurrency(code)
	if err != nil {
		return 0, err
	}
	return cur.Exponent(), nil
}

func minor(amount, code string) (int64, error) {
	cur, err := domain.ParseCurrency(code)
	if err != nil {
		return 0, err
	}
	m, err := domain.ParseMoney(amount, cur)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", amount, code, err)
	}
	return m.Minor(), nil
}
