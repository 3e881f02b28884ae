package promo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// The campaign report (docs/promotions.md#the-campaign-report): per
// campaign, what its rewards granted and what became of the free bets
// (used, cancelled, expired, left), as the ledger's reward records hold
// them now; and what the campaign cost over the days asked, from the
// history read model: its promo wins less their reversals, less what the
// player staked on its free bets (nothing: a free bet takes nothing) —
// the same amounts, from the same rows, as the GGR report's promo
// columns, so the two tie to the cent.

// RewardCounts are a campaign's rewards and free bets, in the ledger now.
type RewardCounts struct {
	Rewards                                 int64
	Granted, Used, Cancelled, Expired, Left int64
}

// DayMoney is a campaign's promo money of one UTC day, in minor units of
// its currency (positive amounts).
type DayMoney struct {
	CampaignID                                               string
	Day                                                      time.Time
	PromoBets, PromoBetRefunds, PromoWins, PromoWinReversals int64
}

// ReportStore reads what the report adds up (adapters/postgres/promostore).
type ReportStore interface {
	// RewardCounts are the counts of each of the client's campaigns named.
	RewardCounts(ctx context.Context, clientID string, campaignIDs []string) (map[string]RewardCounts, error)
	// CampaignMoney is the promo money of the campaigns named per day,
	// from..to (days; zero: open), in day order.
	CampaignMoney(ctx context.Context, clientID string, campaignIDs []string, from, to time.Time) ([]DayMoney, error)
}

// ReportQuery asks for the campaign report of a client.
type ReportQuery struct {
	ClientID   string
	CampaignID string // "" every campaign
	// From and To bound the days of the money columns, both included
	// (UTC days); zero is open.
	From, To time.Time
	// Reporting converts each campaign's cost, day by day, into this
	// currency; zero: none.
	Reporting domain.Currency
}

// ReportLine is one campaign of the report.
type ReportLine struct {
	Campaign Campaign
	Counts   RewardCounts
	// PromoBets .. PromoWinReversals are minor units of the campaign's
	// currency over the days asked; Cost is (PromoWins - PromoWinReversals)
	// - (PromoBets - PromoBetRefunds).
	PromoBets, PromoBetRefunds, PromoWins, PromoWinReversals, Cost int64
	// Reporting is Cost in the reporting currency, when asked.
	Reporting *ReportingCost
}

// ReportingCost is a cost converted day by day; Complete false names the
// days without a rate (the amount is then zero and means nothing).
type ReportingCost struct {
	Currency    domain.Currency
	Cost        int64
	Complete    bool
	MissingDays []time.Time
}

// Report is the campaign report: its lines (newest campaign first) and,
// in a reporting currency, their total.
type Report struct {
	Lines []ReportLine
	Total *ReportingCost
}

// Reports builds the campaign report.
type Reports struct {
	Campaigns Store
	Store     ReportStore
	// FX reads exchange rates for a reporting currency; nil: a report in
	// one is projections.ErrNoRates.
	FX projections.FXRates
}

// Report builds the report q asks for.
func (r Reports) Report(ctx context.Context, q ReportQuery) (Report, error) {
	var list []Campaign
	if q.CampaignID != "" {
		if err := possibleID("campaign", q.CampaignID); err != nil {
			return Report{}, err
		}
		c, err := r.Campaigns.Campaign(ctx, q.ClientID, q.CampaignID)
		if err != nil {
			return Report{}, err
		}
		list = []Campaign{c}
	} else {
		var err error
		if list, err = r.Campaigns.Campaigns(ctx, q.ClientID); err != nil {
			return Report{}, err
		}
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	counts, err := r.Store.RewardCounts(ctx, q.ClientID, ids)
	if err != nil {
		return Report{}, err
	}
	days, err := r.Store.CampaignMoney(ctx, q.ClientID, ids, q.From, q.To)
	if err != nil {
		return Report{}, err
	}
	var rates projections.DayRates
	if !q.Reporting.IsZero() && len(days) > 0 {
		var currencies []string
		for _, c := range list {
			if code := c.BetValue.Currency().Code(); !slices.Contains(currencies, code) {
				currencies = append(currencies, code)
			}
		}
		if rates, err = projections.LoadDayRates(ctx, r.FX, q.Reporting, currencies, days[0].Day, lastDay(days)); err != nil {
			return Report{}, err
		}
	}
	out := Report{Lines: make([]ReportLine, len(list))}
	index := make(map[string]int, len(list))
	for i, c := range list {
		index[c.ID] = i
		out.Lines[i] = ReportLine{Campaign: c, Counts: counts[c.ID]}
		if !q.Reporting.IsZero() {
			out.Lines[i].Reporting = &ReportingCost{Currency: q.Reporting, Complete: true}
		}
	}
	for _, d := range days {
		i, ok := index[d.CampaignID]
		if !ok {
			continue
		}
		l := &out.Lines[i]
		l.PromoBets += d.PromoBets
		l.PromoBetRefunds += d.PromoBetRefunds
		l.PromoWins += d.PromoWins
		l.PromoWinReversals += d.PromoWinReversals
		if l.Reporting == nil {
			continue
		}
		cost := (d.PromoWins - d.PromoWinReversals) - (d.PromoBets - d.PromoBetRefunds)
		v, ok, err := rates.Convert(cost, l.Campaign.BetValue.Currency().Code(), d.Day)
		if err != nil {
			return Report{}, fmt.Errorf("campaign %s on %s: %w", d.CampaignID, d.Day.Format(time.DateOnly), err)
		}
		if !ok {
			l.Reporting.Complete = false
			l.Reporting.MissingDays = append(l.Reporting.MissingDays, d.Day)
			continue
		}
		l.Reporting.Cost += v
	}
	if !q.Reporting.IsZero() {
		out.Total = &ReportingCost{Currency: q.Reporting, Complete: true}
	}
	for i := range out.Lines {
		l := &out.Lines[i]
		l.Cost = (l.PromoWins - l.PromoWinReversals) - (l.PromoBets - l.PromoBetRefunds)
		if l.Reporting == nil {
			continue
		}
		if !l.Reporting.Complete {
			l.Reporting.Cost = 0
			out.Total.Complete = false
			out.Total.MissingDays = mergeDays(out.Total.MissingDays, l.Reporting.MissingDays)
			continue
		}
		out.Total.Cost += l.Reporting.Cost
	}
	if out.Total != nil && !out.Total.Complete {
		out.Total.Cost = 0
	}
	return out, nil
}

func lastDay(days []DayMoney) time.Time {
	last := days[0].Day
	for _, d := range days {
		if d.Day.After(last) {
			last = d.Day
		}
	}
	return last
}

func mergeDays(a, b []time.Time) []time.Time {
	for _, d := range b {
		if !slices.ContainsFunc(a, d.Equal) {
			a = append(a, d)
		}
	}
	slices.SortFunc(a, func(x, y time.Time) int { return x.Compare(y) })
	return a
}

// Report is the campaign report of q, with fx for a reporting currency.
func (s *Service) Report(ctx context.Context, q ReportQuery, fx projections.FXRates) (Report, error) {
	return Reports{Campaigns: s.store, Store: s.store, FX: fx}.Report(ctx, q)
}
