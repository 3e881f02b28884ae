package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// ErrSessionExpired refuses a new bet after its game session expired.
var ErrSessionExpired = errors.New("game session has expired")

// PlaceBetInSession is PlaceBet for a game session that takes bets until
// expiresAt. Expiry is decided after the idempotency check, with the
// ledger's time: a retry of a bet accepted before the session expired still
// answers its original result, while a new bet after expiry is
// ErrSessionExpired and moves nothing.
func (h *Handler) PlaceBetInSession(ctx context.Context, g domain.GameTx, amount domain.Money, expiresAt time.Time) (Result, error) {
	return h.run(ctx, gameKey(g), gameRequest(g, domain.TxBet, amount.String()), gameAccounts(g), roundRefs(g),
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			if !env.Now.Before(expiresAt) {
				return domain.Change{}, fmt.Errorf("bet %s after %s: %w", g.ExternalTxID,
					expiresAt.UTC().Format(time.RFC3339), ErrSessionExpired)
			}
			return domain.DecideBet(r, g, amount, env)
		})
}
