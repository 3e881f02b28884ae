package commands

import (
	"context"
	"fmt"

	"github.com/pitboss/pitboss/domain"
)

// StaleRound is a round the stale-round job found open past its
// provider's limit, with the wallet it was played from (the round's record
// names it; the ledger must load it before the decision reads the round).
type StaleRound struct {
	domain.RoundClose
	Wallet domain.AccountID
}

// CloseRound closes a stale round (domain.DecideRoundClose): a
// wallet.round_closed.v1 on the player's wallet stream that moves no money.
// It goes through the ledger like every write, and is idempotent: the
// ledger closes a round once, and a second call replays the first.
func (h *Handler) CloseRound(ctx context.Context, s StaleRound) (Result, error) {
	key := domain.RoundCloseKey(s.Client, s.Provider, s.Round)
	roundKey := domain.RoundKey(s.Client, s.Provider, s.Round)
	req := map[string]string{"kind": string(domain.TxRoundClose), "provider": s.Provider, "round_id": s.Round}
	return h.run(ctx, key, req, []domain.AccountID{s.Wallet}, []string{roundKey},
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			if rec, ok := r.Record(roundKey); ok && rec.Account != s.Wallet {
				return domain.Change{}, fmt.Errorf("round %s is played from %s, not %s: %w", s.Round, rec.Account,
					s.Wallet, domain.ErrInvalidArgument)
			}
			return domain.DecideRoundClose(r, s.RoundClose, env)
		})
}
