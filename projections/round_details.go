package projections

import (
	"context"
	"fmt"
)

// RoundQuery selects one round of a client's history by the provider's
// round id (GET /api/v1/rounds/{round_id}, docs/read-models.md). A round
// id is unique at its provider, not across providers.
type RoundQuery struct {
	ClientID string
	RoundID  string
	// Provider narrows the search to one provider's round; empty: the
	// round of every provider the client has placed bets with.
	Provider string
}

// Round is one round of a client's history: its game_result row and the
// history rows behind it.
type Round struct {
	// Result is the round's game_result row: its provider, player (that
	// of its first event), game, currency, net amount and status.
	Result Transaction
	// Rows are the round's player's bets, wins and rollbacks carrying the
	// round's id, and the ledger's close of it (round_close), in history
	// order. A rollback takes the round of what it undid.
	Rows []Transaction
}

// RoundReader reads rounds from the transaction history.
type RoundReader interface {
	// Rounds returns the client's rounds with q's id (of q.Provider when
	// given), ordered by provider; none when the client has no such round.
	// Rows are read only when exactly one round matches: several are an
	// ambiguity the caller resolves by naming the provider.
	Rounds(ctx context.Context, q RoundQuery) ([]Round, error)
}

// Status is the round's status as the history knows it: its game
// result's (pending while a bet stands and no call closed the round,
// settled once closed, rolled_back when every bet was refunded and no win
// stands), or auto_closed for a settled round the ledger closed as stale
// (a round_close row), as the provider's daily round export has it.
func (r Round) Status() Status {
	s := r.Result.Status
	if s != StatusSettled {
		return s
	}
	for _, t := range r.Rows {
		if t.Type == TypeRoundClose {
			return StatusAutoClosed
		}
	}
	return s
}

// RoundTotals are a round's sums in minor units of its currency, every
// one positive but Net: the money that moved on the player's wallet, promo
// and jackpot money included (each row says which it was).
type RoundTotals struct {
	// Bets are every bet placed, refunded ones included.
	Bets int64
	// Wins are every win credited, reversed ones included.
	Wins int64
	// Refunds are the bets rollbacks gave back; Reversals the wins they
	// took back. A rollback that found nothing to undo moves nothing.
	Refunds, Reversals int64
	// Net is the round's result for the player: Wins - Bets + Refunds -
	// Reversals, the sum of its rows' amounts.
	Net int64
}

// Totals adds up the round's rows. A sum past int64 is an error (no
// real round comes near it, but a sum is never allowed to wrap).
func (r Round) Totals() (RoundTotals, error) {
	var t RoundTotals
	add := func(sum *int64, v int64) error {
		s := *sum + v
		if (v > 0 && s < *sum) || (v < 0 && s > *sum) {
			return fmt.Errorf("round %s of %s: totals overflow", r.Result.RoundID, r.Result.Provider)
		}
		*sum = s
		return nil
	}
	for _, row := range r.Rows {
		var err error
		switch {
		case row.Type == TypeBet:
			err = add(&t.Bets, -row.Amount)
		case row.Type == TypeWin:
			err = add(&t.Wins, row.Amount)
		case row.Type == TypeRollback && row.Amount > 0:
			err = add(&t.Refunds, row.Amount)
		case row.Type == TypeRollback && row.Amount < 0:
			err = add(&t.Reversals, -row.Amount)
		}
		if err == nil {
			err = add(&t.Net, row.Amount)
		}
		if err != nil {
			return RoundTotals{}, err
		}
	}
	return t, nil
}

// Round returns the client's rounds with q's id (see RoundReader) and the
// position the answer reflects, waiting for minPosition as History does.
func (q *Queries) Round(ctx context.Context, r RoundQuery, minPosition int64) ([]Round, int64, error) {
	if q.Rounds == nil {
		return nil, 0, ErrNotConfigured
	}
	pos, err := q.await(ctx, History, r.ClientID, minPosition)
	if err != nil {
		return nil, 0, err
	}
	rounds, err := q.Rounds.Rounds(ctx, r)
	return rounds, pos, err
}
