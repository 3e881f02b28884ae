package projections

import "time"

// ProviderRound is one round's part of one UTC day in a provider's daily
// round export (docs/reconciliation.md): the bets, wins and rollbacks of
// the round whose events fall on that day, booked as the GGR report books
// them (a refund or reversal on its own day, against the kind of what it
// undoes), so a day's rounds add up to the provider's GGR of the day.
// Amounts are minor units of Currency at Scale; Status is the whole
// round's status as the history holds it when the export is read:
// pending, settled, rolled_back (every bet booked and refunded),
// auto_closed (settled by the ledger's close of a stale round), or
// discarded (nothing of the round was ever booked: only rollbacks that
// found nothing to undo).
type ProviderRound struct {
	ClientID string
	// RoundID is the provider's round id; a bet sent without one is a
	// round of its own, "tx:" and its transaction id (as in the GGR's
	// round counts).
	RoundID, PlayerID, Game, Currency string
	// NoRoundID says the round is a bet sent without a round id.
	NoRoundID bool
	Scale     int
	// Counts of the day's bets, wins, free (promo) bets and rollbacks that
	// undid something.
	BetCount, WinCount, FreeBetCount, RollbackCount int64
	// DiscardedCount counts the day's rollbacks that found nothing to undo
	// in the round: the transactions they name were discarded, never
	// booked. They move nothing.
	DiscardedCount int64
	// Real money and promo money, as in GGRRow.
	Bets, BetRefunds, Wins, WinReversals                     int64
	PromoBets, PromoBetRefunds, PromoWins, PromoWinReversals int64
	// Jackpot parts of the day's wins and reversals, as in GGRRow.
	JackpotWins, JackpotWinReversals int64
	Status                           Status
	// First and Last are the times of the round's first and last event of
	// the day.
	First, Last time.Time
}

// GGR is the round's real-money gross gaming revenue of the day: net bets
// less net wins.
func (r ProviderRound) GGR() int64 { return r.Bets - r.BetRefunds - (r.Wins - r.WinReversals) }

// PromoGGR is the same for promo (free-spin) money.
func (r ProviderRound) PromoGGR() int64 {
	return r.PromoBets - r.PromoBetRefunds - (r.PromoWins - r.PromoWinReversals)
}

// JackpotGGR is what jackpots paid in the round, net of reversals.
func (r ProviderRound) JackpotGGR() int64 { return -(r.JackpotWins - r.JackpotWinReversals) }
