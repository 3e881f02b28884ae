package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// ErrSessionExpired refuses a new bet after its game session ended: it
// expired, or a newer session of the same player on the same provider
// superseded it.
var ErrSessionExpired = errors.New("game session has expired")

// SessionTerms are what decides whether a game session still takes bets.
type SessionTerms struct {
	// ExpiresAt is the session's end.
	ExpiresAt time.Time
	// Superseded: a newer session of the same client, player, provider and
	// currency exists (wallet.Sessions.Superseded), so this one takes no
	// new bet.
	Superseded bool
}

// PlaceBetInSession is PlaceBet for a game session that takes bets on the
// terms given. They are decided after the idempotency check, with the
// ledger's time: a retry of a bet accepted before the session ended still
// answers its original result, while a new bet after it is
// ErrSessionExpired and moves nothing.
func (h *Handler) PlaceBetInSession(ctx context.Context, g domain.GameTx, amount domain.Money, terms SessionTerms) (Result, error) {
	return h.run(ctx, gameKey(g), gameRequest(g, domain.TxBet, amount.String()), gameAccounts(g), betRefs(g),
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			switch {
			case terms.Superseded:
				return domain.Change{}, fmt.Errorf("bet %s in session %s, superseded by a newer launch: %w",
					g.ExternalTxID, g.Session, ErrSessionExpired)
			case !env.Now.Before(terms.ExpiresAt):
				return domain.Change{}, fmt.Errorf("bet %s after %s: %w", g.ExternalTxID,
					terms.ExpiresAt.UTC().Format(time.RFC3339), ErrSessionExpired)
			}
			return domain.DecideBet(r, g, amount, env)
		})
}
