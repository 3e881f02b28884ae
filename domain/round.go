package domain

import (
	"fmt"
	"time"
)

// RoundClose asks the ledger to close a round on its own: one left open (a
// bet standing, no call with round_closed) for at least After, the limit of
// its provider's wallet protocol (Caleta finishes its open rounds after 48
// hours, docs/protocols/caleta.md). Nothing moves: the round's bets stay
// booked, as lost, and its game result counts as settled.
type RoundClose struct {
	Client, Provider, Round string
	After                   time.Duration
}

// RoundCloseKey is the idempotency key of the ledger's close of a round: a
// round is closed by the ledger at most once.
func RoundCloseKey(client, provider, round string) string {
	return "roundclose|" + client + "|" + provider + "|" + round
}

// DecideRoundClose closes the round c names when it is still open (a bet
// standing, not closed by a call) and was opened at least c.After before
// env.Now. A round recorded before rounds kept their opening time (a zero
// CreatedAt) counts as old enough: the store that finds the candidates
// judges those by the time their record was written.
//
// A later call on the round is booked as before: a win pays (the player is
// owed it), a rollback refunds. Closing only stops the round from
// counting as pending.
func DecideRoundClose(r Reader, c RoundClose, env Env) (Change, error) {
	for _, f := range []struct{ name, v string }{{"client_id", c.Client}, {"provider", c.Provider}, {"round_id", c.Round}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return Change{}, err
		}
	}
	if c.After <= 0 {
		return Change{}, fmt.Errorf("round %s: auto-close age %s must be positive: %w", c.Round, c.After, ErrInvalidArgument)
	}
	round, ok := r.Record(RoundKey(c.Client, c.Provider, c.Round))
	switch {
	case !ok || round.Kind != TxRound:
		return Change{}, fmt.Errorf("round %s: %w", c.Round, ErrTransactionUnknown)
	case round.Closed:
		return Change{}, fmt.Errorf("round %s is closed already: %w", c.Round, ErrRoundNotOpen)
	case round.OpenBets <= 0:
		return Change{}, fmt.Errorf("round %s has no standing bet: %w", c.Round, ErrRoundNotOpen)
	case !round.CreatedAt.IsZero() && env.Now.Sub(round.CreatedAt) < c.After:
		return Change{}, fmt.Errorf("round %s open since %s, less than %s: %w", c.Round,
			round.CreatedAt.UTC().Format(time.RFC3339), c.After, ErrRoundNotStale)
	}
	cur, err := ParseCurrency(round.Currency)
	if err != nil {
		return Change{}, fmt.Errorf("round %s: %w", c.Round, err)
	}
	d := EventData{ClientID: c.Client, PlayerID: round.PlayerID, Provider: c.Provider, RoundID: c.Round,
		Currency: cur.code, Amount: Zero(cur).String(),
		BalanceAfter: FormatMinor(r.Account(round.Account).Balance, cur.Exponent()), RoundClosed: true,
		Reason: "auto-closed: open longer than " + c.After.String(), Postings: []Posting{}}
	own := TxRecord{Key: RoundCloseKey(c.Client, c.Provider, c.Round), Kind: TxRoundClose, Account: round.Account,
		PlayerID: round.PlayerID, Currency: round.Currency, RoundID: c.Round, EventID: env.EventID}
	round.Closed = true
	return Change{Event: newEvent(EventRoundClosed, round.Account, env, d), Records: []TxRecord{own, round}}, nil
}
